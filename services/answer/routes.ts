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
import { assertDimension } from "../../lib/dimension-check.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { hitFromProto, hitToProto, knowledgeBaseFromProto, modeFromProto, modeToProto } from "../../lib/proto-convert.ts";
import type { ChatModel } from "./chat-model.ts";
import { chatTurn, citationToProto, type ChatTurnEvent } from "./chat-turn.ts";
import { indexConversations } from "./index-conversations.ts";
import { retrieve, type RetrievalDeps, type RetrievalSettings } from "./retrieval-stage.ts";

export interface AnswerServiceDeps {
  index: Client<typeof IndexService>;
  embedder: Client<typeof EmbedderService>;
  chatModel?: ChatModel;
  countTokens(text: string): number;
  contextTokenBudget: number;
  maxQuestionChars: number;
  /** Earlier rounds of a conversation given to the chat model (and to the follow-up rewrite). */
  historyRounds?: number;
  /** A turn answered but not stored (the index failed): logged, the answer stands. */
  onTurnNotSaved?: (error: unknown) => void;
}

/** A question's vector with what produced it, so a dimension mismatch can name the model. */
interface EmbeddedQuestion {
  text: string;
  /** The model asked for ("" for the embedder's default). */
  requested: string;
  model: string;
  vector: Float32Array;
  knownTokenShare: number;
}

export function answerRoutes(deps: AnswerServiceDeps) {
  /** Each knowledge base's model as last looked up (by the name it was asked by), for embedEarly. */
  const modelOf = new Map<string, string>();
  const resolve = async (names: string[]): Promise<KnowledgeBase[]> => {
    if (names.length === 0) throw new InvalidInputError("choose at least one knowledge base");
    const kbs = await Promise.all(names.map(async (n) => knowledgeBaseFromProto((await deps.index.getKnowledgeBase({ knowledgeBase: n })).knowledgeBase!)));
    if (modelOf.size > 10_000) modelOf.clear();
    kbs.forEach((kb, i) => modelOf.set(names[i], kb.embeddingModel));
    return kbs;
  };

  const embedQuestion = async (question: string, model = ""): Promise<EmbeddedQuestion> => {
    const res = await deps.embedder.embed({ texts: [question], kind: EmbeddingKind.QUERY, model });
    return { text: question, requested: model, model: res.model, vector: Float32Array.from(res.vectors[0].values), knownTokenShare: res.vectors[0].knownTokenShare };
  };

  /**
   * Starts embedding the question while the knowledge bases are still being looked up: the two do
   * not depend on each other, and a hybrid search otherwise pays for both one after the other. Only
   * for questions retrieval will accept, so a refused one costs no model time. The model is the
   * one the bases had when last looked up (the embedder's default for bases not seen yet); a guess
   * that turns out wrong is embedded again with the right model.
   */
  const embedEarly = (question: string, settings: RetrievalSettingsProto | undefined, names: string[]): Promise<EmbeddedQuestion> | undefined => {
    const text = question.trim();
    if (modeFromProto(settings?.mode ?? 0) === "bm25" || !text || text.length > deps.maxQuestionChars) return undefined;
    const models = new Set(names.map((n) => modelOf.get(n) ?? ""));
    if (models.size !== 1) return undefined;
    const early = embedQuestion(text, [...models][0]);
    early.catch(() => {}); // Awaited (and its error reported) by retrieval; unawaited if the lookup fails first.
    return early;
  };

  const retrievalDeps = (kbs: KnowledgeBase[], early?: Promise<EmbeddedQuestion>): RetrievalDeps => ({
    async embed(question, model = kbs[0].embeddingModel) {
      const started = await early;
      const embedded = started?.text === question && (started.model === model || started.requested === model) ? started : await embedQuestion(question, model);
      const kb = kbs.find((k) => k.embeddingModel === model) ?? kbs[0];
      assertDimension([embedded.vector], kb.embeddingDimension, {
        knowledgeBase: kb.name,
        expectedModel: kb.embeddingModel,
        actualModel: embedded.model,
      });
      return { vector: embedded.vector, knownTokenShare: embedded.knownTokenShare };
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
    embeddingModels: Object.fromEntries(kbs.map((kb) => [kb.id, kb.embeddingModel])),
  });

  const conversations = indexConversations(deps.index);

  return (router: ConnectRouter) =>
    router.service(AnswerService, {
      async retrieve(request) {
        const started = performance.now();
        const early = embedEarly(request.query, request.settings, request.knowledgeBaseIds);
        const kbs = await resolve(request.knowledgeBaseIds);
        const { hits } = await retrieve(request.query, retrievalDeps(kbs, early), settingsOf(kbs, request.settings, 10));
        return { hits: hits.map(hitToProto), searchMs: performance.now() - started };
      },
      async *chat(request, context) {
        // A new conversation over named bases: the question can be embedded while they are looked up.
        const early = request.conversationId || request.assistant ? undefined : embedEarly(request.question, request.settings, request.knowledgeBaseIds);
        const events = chatTurn(
          {
            question: request.question,
            knowledgeBases: [...request.knowledgeBaseIds],
            assistant: request.assistant,
            conversationId: request.conversationId,
            settings: {
              mode: request.settings?.mode ? modeFromProto(request.settings.mode) : undefined,
              topK: request.settings?.topK ?? 0,
              minScore: request.settings?.minScore ?? 0,
              documentIds: [...(request.settings?.documentIds ?? [])],
            },
          },
          {
            port: conversations,
            retrievalDeps: (kbs) => retrievalDeps(kbs, early),
            countTokens: deps.countTokens,
            chatModel: deps.chatModel,
            embedForSupport: async (texts) => {
              const res = await deps.embedder.embed({ texts, kind: EmbeddingKind.DOCUMENT });
              return res.vectors.map((v) => ({ vector: Float32Array.from(v.values), knownTokenShare: v.knownTokenShare }));
            },
            signal: context.signal,
            contextTokenBudget: deps.contextTokenBudget,
            maxQuestionChars: deps.maxQuestionChars,
            historyRounds: deps.historyRounds ?? DEFAULT_HISTORY_ROUNDS,
            onSaveFailure: deps.onTurnNotSaved,
          },
        );
        for await (const event of events) yield toChatResponse(event, deps.chatModel?.name ?? "extractive");
      },
    });
}

/** Rounds of history when the configuration names none (QUARRY_CHAT_HISTORY_ROUNDS). */
export const DEFAULT_HISTORY_ROUNDS = 5;

function toChatResponse(event: ChatTurnEvent, model: string): ChatResponse {
  switch (event.type) {
    case "started":
      return create(ChatResponseSchema, { event: { case: "started", value: { conversationId: event.conversationId, turnId: event.turnId } } });
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
            citationChecks: event.citationChecks.map((c) => ({
              marker: c.marker,
              sentenceStart: c.sentenceStart,
              sentenceEnd: c.sentenceEnd,
              lexicalSupport: c.lexicalSupport,
              embeddingSupport: c.embeddingSupport,
              supported: c.supported,
            })),
            retrievalQuery: event.retrievalQuery,
            rewrite: event.rewrite,
          },
        },
      });
    }
  }
}
