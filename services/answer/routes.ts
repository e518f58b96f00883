import { create } from "@bufbuild/protobuf";
import type { Client, ConnectRouter } from "@connectrpc/connect";
import {
  AnswerService,
  ChatResponseSchema,
  ChatStage,
  type ChatResponse,
  type RetrievalSettings as RetrievalSettingsProto,
} from "../../gen/quarry/answer/v1/answer_pb.ts";
import { EmbedderService, EmbeddingKind } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import { hitFromProto, hitToProto, knowledgeBaseFromProto, modeFromProto, modeToProto } from "../../lib/proto-convert.ts";
import { answer, type AnswerEvent } from "./answer-pipeline.ts";
import type { ChatModel } from "./chat-model.ts";
import { retrieve, type RetrievalDeps, type RetrievalSettings } from "./retrieval-stage.ts";

export interface AnswerServiceDeps {
  index: Client<typeof IndexService>;
  embedder: Client<typeof EmbedderService>;
  chatModel?: ChatModel;
  countTokens(text: string): number;
  contextTokenBudget: number;
  maxQuestionChars: number;
}

export function answerRoutes(deps: AnswerServiceDeps) {
  const resolve = async (names: string[]): Promise<KnowledgeBase[]> => {
    if (names.length === 0) throw new InvalidInputError("choose at least one knowledge base");
    const kbs = await Promise.all(names.map(async (n) => knowledgeBaseFromProto((await deps.index.getKnowledgeBase({ knowledgeBase: n })).knowledgeBase!)));
    const models = new Set(kbs.map((kb) => `${kb.embeddingModel}/${kb.embeddingDimension}`));
    if (models.size > 1) {
      throw new FailedPreconditionError(`these knowledge bases use different embedding models (${[...models].join(", ")}); search them one at a time`);
    }
    return kbs;
  };

  const retrievalDeps = (kbs: KnowledgeBase[]): RetrievalDeps => ({
    async embed(question) {
      const res = await deps.embedder.embed({ texts: [question], kind: EmbeddingKind.QUERY, expectedDimension: kbs[0].embeddingDimension });
      return { vector: Float32Array.from(res.vectors[0].values), knownTokenShare: res.vectors[0].knownTokenShare };
    },
    async search(q) {
      const res = await deps.index.search({
        knowledgeBaseIds: q.knowledgeBaseIds,
        text: q.text,
        vector: q.vector ? Array.from(q.vector) : [],
        mode: modeToProto(q.mode),
        topK: q.topK,
        minScore: q.minScore,
        documentIds: q.documentIds,
        candidates: q.candidates ?? 0,
        rrfK: q.rrfK ?? 0,
        weights: q.weights,
      });
      return res.hits.map(hitFromProto);
    },
  });

  const settingsOf = (kbs: KnowledgeBase[], s: RetrievalSettingsProto | undefined, defaultTopK: number): RetrievalSettings => ({
    knowledgeBaseIds: kbs.map((kb) => kb.id),
    mode: modeFromProto(s?.mode ?? 0),
    topK: s?.topK || defaultTopK,
    minScore: s?.minScore ?? 0,
    documentIds: [...(s?.documentIds ?? [])],
    maxQuestionChars: deps.maxQuestionChars,
  });

  return (router: ConnectRouter) =>
    router.service(AnswerService, {
      async retrieve(request) {
        const kbs = await resolve(request.knowledgeBaseIds);
        const started = performance.now();
        const { hits } = await retrieve(request.query, retrievalDeps(kbs), settingsOf(kbs, request.settings, 10));
        return { hits: hits.map(hitToProto), searchMs: performance.now() - started };
      },
      async *chat(request, context) {
        const kbs = await resolve(request.knowledgeBaseIds);
        const settings = settingsOf(kbs, request.settings, 8);
        const events = answer(
          request.question,
          { ...retrievalDeps(kbs), countTokens: deps.countTokens, chatModel: deps.chatModel, signal: context.signal },
          { retrieval: settings, contextTokenBudget: deps.contextTokenBudget },
        );
        for await (const event of events) yield toChatResponse(event, deps.chatModel?.name ?? "extractive");
      },
    });
}

function toChatResponse(event: AnswerEvent, model: string): ChatResponse {
  switch (event.type) {
    case "status":
      return create(ChatResponseSchema, {
        event: { case: "status", value: { stage: event.stage === "retrieving" ? ChatStage.RETRIEVING : ChatStage.GENERATING } },
      });
    case "text":
      return create(ChatResponseSchema, { event: { case: "text", value: { text: event.delta } } });
    case "citation": {
      const c = event.citation;
      return create(ChatResponseSchema, {
        event: {
          case: "citation",
          value: {
            marker: c.marker,
            chunkId: c.chunkId,
            documentId: c.documentId,
            fileName: c.fileName,
            page: c.page,
            pageEnd: c.pageEnd,
            sectionPath: c.sectionPath,
            startOffset: c.start,
            endOffset: c.end,
            snippet: c.snippet,
            score: c.score,
          },
        },
      });
    }
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
          },
        },
      });
    }
  }
}
