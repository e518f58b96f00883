// The answer service's application layer, between its routes and its adapters: it checks a request
// once (before any look-up or model time is spent), finds the knowledge bases through the
// retriever, and runs the retrieval or the answer pipeline. No transport here: routes.ts translates
// protobuf, adapters/index-retriever.ts talks to the peers.
import type { KnowledgeBase, RetrievalMode, SearchHit } from "../../lib/domain.ts";
import { ErrorReasons, FailedPreconditionError, hasReason } from "../../lib/errors.ts";
import type { ChatModel } from "./chat-models/chat-model.ts";
import { chatTurn, type ChatTurnEvent, type ChatTurnRequest, type ConversationPort } from "./chat-turn.ts";
import type { SupportEmbedder } from "./answering/citation-verifier.ts";
import type { NeighbourDeps } from "./retrieval/neighbour-expansion.ts";
import type { Reranker } from "./retrieval/rerank/reranker.ts";
import { retrieveWithOptions, type RetrievalExtras, type RetrievalNotes } from "./retrieval/retrieval-options.ts";
import { validateRetrieval, type RetrievalDeps, type RetrievalSettings } from "./retrieval/retrieval-stage.ts";
import type { DebugLookups } from "./debug/debug-lookups.ts";
import type { DebugRequest } from "./debug/debug-plan.ts";
import { debugRetrieval } from "./debug/retrieval-debug.ts";
import { noMetrics, type Metrics } from "../../lib/metrics/metrics.ts";
import { measuredTurn } from "./measured-turn.ts";

/** What a caller may choose of a retrieval; topK 0 means the RPC's default. */
export type RetrievalOptions = Pick<RetrievalSettings, "mode" | "topK" | "minScore" | "documentIds" | "metadataEquals" | "fusion"> & RetrievalExtras;

export interface Question {
  text: string;
  /** Knowledge bases by id or name. */
  knowledgeBases: string[];
  options: RetrievalOptions;
}

export interface OpenedRetrieval {
  knowledgeBases: KnowledgeBase[];
  /** The search, the question's vector, and chunks by position for neighbour expansion. */
  deps: RetrievalDeps & Pick<NeighbourDeps, "chunksAt">;
}

/** Where the knowledge bases, the question's vector and the search come from (adapters/index-retriever.ts). */
export interface Retriever {
  /**
   * Looks the knowledge bases up (NotFoundError for a missing one) and readies their search; the
   * question is already accepted. The signal fires when the caller goes away: the look-ups, the
   * question's vector and the search stop there (CancelledError) instead of running for nobody.
   */
  open(question: string, mode: RetrievalMode, knowledgeBases: string[], signal?: AbortSignal): Promise<OpenedRetrieval>;
  embedForSupport: SupportEmbedder;
}

export interface AnswerApplicationDeps {
  retriever: Retriever;
  /** Absent when no language model is configured: answers are then extractive. */
  chatModel?: ChatModel;
  /** Absent when neither a rerank server nor a chat model is configured (rerank is then refused). */
  reranker?: Reranker;
  countTokens(text: string): number;
  contextTokenBudget: number;
  maxQuestionChars: number;
  /** Where assistants, conversations and turns are kept (adapters/index-conversations.ts). */
  conversations: ConversationPort;
  /** Earlier rounds of a conversation given to the chat model (and to the follow-up rewrite); 5 unless configured. */
  historyRounds?: number;
  /** Stored turns, chunks and documents for DebugRetrieval (adapters/index-debug-lookups.ts); absent: it is refused. */
  debugLookups?: DebugLookups;
  /** A turn answered but not stored (the index failed): logged, the answer stands. */
  onTurnNotSaved?: (error: unknown) => void;
  /** Where each answer's latency, abstention and citation verdicts are recorded. */
  metrics?: Metrics;
}

/** Rounds of history when the configuration names none (QUARRY_CHAT_HISTORY_ROUNDS). */
export const DEFAULT_HISTORY_ROUNDS = 5;

const DEFAULT_TOP_K = { retrieve: 10, chat: 8 };

export class AnswerApplication {
  constructor(private readonly deps: AnswerApplicationDeps) {}

  /** The model that writes answers, "extractive" without one. */
  get modelName(): string {
    return this.deps.chatModel?.name ?? "extractive";
  }

  /** The signal fires when the caller goes away (see Retriever.open). */
  async retrieve(question: Question, signal?: AbortSignal): Promise<{ hits: SearchHit[]; searchMs: number; notes: RetrievalNotes }> {
    const started = performance.now();
    const run = async () => {
      const { text, settings, deps, extras } = await this.open(question, DEFAULT_TOP_K.retrieve, signal);
      return retrieveWithOptions(text, { ...deps, ...this.optionDeps(), signal }, settings, extras, this.deps.contextTokenBudget);
    };
    let result;
    try {
      result = await run();
    } catch (error) {
      // A base that switched its embedding model between the look-up and the search (ChangeEmbeddingModel):
      // the retriever searches such a base again itself (IndexRetriever) unless the bases of one search
      // now differ in model; then the whole retrieval is opened again, and regrouped by model.
      if (!hasReason(error, ErrorReasons.staleQueryVector)) throw error;
      result = await run();
    }
    return { hits: result.hits, searchMs: performance.now() - started, notes: result.notes };
  }

  /** One turn of a conversation (a new one when the request names none); see chat-turn.ts. */
  chat(request: ChatTurnRequest, signal?: AbortSignal): AsyncGenerator<ChatTurnEvent> {
    const turn = chatTurn(request, {
      port: this.deps.conversations,
      open: (query, mode, knowledgeBases) => this.deps.retriever.open(query, mode, knowledgeBases, signal),
      countTokens: this.deps.countTokens,
      chatModel: this.deps.chatModel,
      reranker: this.deps.reranker,
      embedForSupport: (texts) => this.deps.retriever.embedForSupport(texts),
      signal,
      contextTokenBudget: this.deps.contextTokenBudget,
      maxQuestionChars: this.deps.maxQuestionChars,
      historyRounds: this.deps.historyRounds ?? DEFAULT_HISTORY_ROUNDS,
      onSaveFailure: this.deps.onTurnNotSaved,
    });
    return measuredTurn(turn, this.deps.metrics ?? noMetrics);
  }

  /** "Why wasn't this found?": reruns a turn's or a query's retrieval and follows the expected chunks (debug/retrieval-debug.ts). */
  debugRetrieval(request: DebugRequest, signal?: AbortSignal) {
    const lookups = this.deps.debugLookups;
    if (!lookups) throw new FailedPreconditionError("this answer service was built without the index look-ups DebugRetrieval needs");
    return debugRetrieval(request, {
      lookups,
      getAssistant: (a) => this.deps.conversations.getAssistant(a),
      open: (query, mode, knowledgeBases) => this.deps.retriever.open(query, mode, knowledgeBases, signal),
      chatModel: this.deps.chatModel,
      reranker: this.deps.reranker,
      countTokens: this.deps.countTokens,
      contextTokenBudget: this.deps.contextTokenBudget,
      maxQuestionChars: this.deps.maxQuestionChars,
      signal,
    });
  }

  /** What the retrieval options use beyond the search: the chat model, the reranker, the token counter. */
  private optionDeps() {
    return { chatModel: this.deps.chatModel, reranker: this.deps.reranker, countTokens: this.deps.countTokens };
  }

  private async open(question: Question, defaultTopK: number, signal?: AbortSignal) {
    const o = question.options;
    const limits = { knowledgeBaseIds: question.knowledgeBases, topK: o.topK || defaultTopK, maxQuestionChars: this.deps.maxQuestionChars };
    const text = validateRetrieval(question.text, limits);
    const { knowledgeBases, deps } = await this.deps.retriever.open(text, o.mode, question.knowledgeBases, signal);
    const settings: RetrievalSettings = {
      ...limits,
      knowledgeBaseIds: knowledgeBases.map((kb) => kb.id),
      mode: o.mode,
      minScore: o.minScore,
      documentIds: [...o.documentIds],
      embeddingModels: Object.fromEntries(knowledgeBases.map((kb) => [kb.id, kb.embeddingModel])),
      ...(o.metadataEquals && Object.keys(o.metadataEquals).length > 0 ? { metadataEquals: { ...o.metadataEquals } } : {}),
      ...(o.fusion ? { fusion: o.fusion } : {}),
    };
    const extras: RetrievalExtras = {
      rerank: o.rerank,
      queryExpansion: o.queryExpansion,
      queryVariants: o.queryVariants,
      neighbourChunks: o.neighbourChunks,
      bm25Fill: o.bm25Fill,
    };
    return { text, settings, deps, extras };
  }
}
