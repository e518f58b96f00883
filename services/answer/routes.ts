// The answer service's RPC edge: protobuf in, the application's domain calls, protobuf out.
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  AnswerService,
  ChatResponseSchema,
  ChatStage,
  type ChatResponse,
  type RetrievalSettings as RetrievalSettingsProto,
} from "../../gen/quarry/answer/v1/answer_pb.ts";
import { fusionFromProto, hitToProto, modeFromProto, modeToProto } from "../../lib/proto-convert.ts";
import { citationToProto, type ChatTurnEvent } from "./chat-turn.ts";
import { evidenceToProto } from "./conversation/turn-provenance.ts";
import type { AnswerApplication, RetrievalOptions } from "./answer-service.ts";
import type { RetrievalNotes } from "./retrieval/retrieval-options.ts";
import { debugRetrievalHandler } from "./debug/debug-routes.ts";
import { expansionOf, queryRewriteOf } from "./retrieval/query-rewrite-mode.ts";

export function answerRoutes(app: AnswerApplication) {
  return (router: ConnectRouter) =>
    router.service(AnswerService, {
      async retrieve(request, context) {
        const { hits, searchMs, notes } = await app.retrieve({ text: request.query, knowledgeBases: request.knowledgeBaseIds, options: optionsFromProto(request.settings) }, context.signal);
        return { hits: hits.map(hitToProto), searchMs, notes: notesToProto(notes) };
      },
      async *chat(request, context) {
        const { metadataEquals, fusion, rerank, queryExpansion, queryVariants, neighbourChunks, bm25Fill } = optionsFromProto(request.settings);
        const events = app.chat(
          {
            question: request.question,
            knowledgeBases: [...request.knowledgeBaseIds],
            assistant: request.assistant,
            conversationId: request.conversationId,
            history: request.history.map((r) => ({ question: r.question, answer: r.answer })),
            oneOff: request.oneOff,
            // Unset fields stay unset, so an assistant's defaults apply.
            settings: {
              mode: request.settings?.mode ? modeFromProto(request.settings.mode) : undefined,
              topK: request.settings?.topK ?? 0,
              minScore: request.settings?.minScore ?? 0,
              documentIds: [...(request.settings?.documentIds ?? [])],
              metadataEquals,
              fusion,
            },
            options: { rerank, queryExpansion, queryVariants, neighbourChunks, bm25Fill },
          },
          context.signal,
        );
        for await (const event of events) yield toChatResponse(event, app.modelName);
      },
      debugRetrieval: (request, context) => debugRetrievalHandler(app, request, optionsFromProto(request.settings), context.signal),
    });
}

function optionsFromProto(s: RetrievalSettingsProto | undefined): RetrievalOptions {
  return {
    mode: modeFromProto(s?.mode ?? 0),
    topK: s?.topK ?? 0,
    minScore: s?.minScore ?? 0,
    documentIds: [...(s?.documentIds ?? [])],
    metadataEquals: { ...s?.metadataEquals },
    ...(s?.fusion ? { fusion: fusionFromProto(s.fusion, s.convexAlpha) } : {}),
    rerank: s?.rerank ?? false,
    queryExpansion: expansionOf(queryRewriteOf(s)),
    queryVariants: s?.queryVariants ?? 0,
    neighbourChunks: s?.neighbourChunks ?? 0,
    bm25Fill: s?.bm25Fill ?? false,
  };
}

function notesToProto(notes: RetrievalNotes) {
  return {
    degraded: notes.degraded ?? "",
    rerankSkipped: notes.rerankSkipped ?? "",
    queries: notes.queries,
    fallbackHits: notes.fallbackHits,
    reranked: notes.reranked,
    reranker: notes.reranker ?? "",
  };
}

function toChatResponse(event: ChatTurnEvent, model: string): ChatResponse {
  switch (event.type) {
    case "started":
      return create(ChatResponseSchema, { event: { case: "started", value: { conversationId: event.conversationId, turnId: event.turnId, traceId: event.traceId } } });
    case "status":
      return create(ChatResponseSchema, {
        event: { case: "status", value: { stage: event.stage === "retrieving" ? ChatStage.RETRIEVING : ChatStage.GENERATING } },
      });
    case "text":
      return create(ChatResponseSchema, { event: { case: "text", value: { text: event.delta } } });
    case "citation":
      return create(ChatResponseSchema, { event: { case: "citation", value: citationToProto(event.citation) } });
    case "final": {
      const retrievalStage = event.record.stages.find((s) => s.stage === "retrieve");
      return create(ChatResponseSchema, {
        event: {
          case: "final",
          value: {
            usage: { promptTokens: event.usage?.promptTokens ?? 0, completionTokens: event.usage?.completionTokens ?? 0 },
            retrieval: {
              mode: modeToProto(event.retrievalSummary.mode),
              hitsConsidered: event.retrievalSummary.hitsConsidered,
              chunksInContext: event.retrievalSummary.usedInContext,
              topScore: event.retrievalSummary.topScore,
              retrievalMs: retrievalStage?.durationMs ?? 0,
            },
            extractive: event.extractive,
            droppedMarkers: event.droppedMarkers,
            model,
            resolvedMarkers: event.record.markers.resolved,
            unsupportedMarkers: event.record.markers.unsupported,
            retrievalNotes: notesToProto(event.notes),
            citationChecks: event.citationChecks,
            retrievalQuery: event.retrievalQuery,
            rewrite: event.rewrite,
            correctionsUsed: event.correctionsUsed,
            answered: event.evidence.answered,
            answeredReason: event.evidence.reason,
            evidence: evidenceToProto(event.evidence),
          },
        },
      });
    }
  }
}
