// The answer service's application layer, between its routes and its adapters: it checks a request
// once (before any look-up or model time is spent), finds the knowledge bases through the
// retriever, and runs the retrieval or the answer pipeline. No transport here: routes.ts translates
// protobuf, adapters/index-retriever.ts talks to the peers.
import type { KnowledgeBase, RetrievalMode, SearchHit } from "../../lib/domain.ts";
import { FailedPreconditionError } from "../../lib/errors.ts";
import { answerChecked, type AnswerEvent } from "./answer-pipeline.ts";
import type { ChatModel } from "./chat-model.ts";
import type { SupportEmbedder } from "./citation-verifier.ts";
import { retrieveChecked, validateRetrieval, type RetrievalDeps, type RetrievalSettings } from "./retrieval-stage.ts";

/** What a caller may choose of a retrieval; topK 0 means the RPC's default. */
export type RetrievalOptions = Pick<RetrievalSettings, "mode" | "topK" | "minScore" | "documentIds">;

export interface Question {
  text: string;
  /** Knowledge bases by id or name. */
  knowledgeBases: string[];
  options: RetrievalOptions;
}

export interface OpenedRetrieval {
  knowledgeBases: KnowledgeBase[];
  deps: RetrievalDeps;
}

/** Where the knowledge bases, the question's vector and the search come from (adapters/index-retriever.ts). */
export interface Retriever {
  /** Looks the knowledge bases up (NotFoundError for a missing one) and readies their search; the question is already accepted. */
  open(question: string, mode: RetrievalMode, knowledgeBases: string[]): Promise<OpenedRetrieval>;
  embedForSupport: SupportEmbedder;
}

export interface AnswerApplicationDeps {
  retriever: Retriever;
  /** Absent when no language model is configured: answers are then extractive. */
  chatModel?: ChatModel;
  countTokens(text: string): number;
  contextTokenBudget: number;
  maxQuestionChars: number;
}

function isStaleQueryVector(error: unknown): boolean {
  return error instanceof FailedPreconditionError && /^query vector has \d+ dimensions; knowledge base \S+ stores \d+/.test(error.message);
}

const DEFAULT_TOP_K = { retrieve: 10, chat: 8 };

export class AnswerApplication {
  constructor(private readonly deps: AnswerApplicationDeps) {}

  /** The model that writes answers, "extractive" without one. */
  get modelName(): string {
    return this.deps.chatModel?.name ?? "extractive";
  }

  async retrieve(question: Question): Promise<{ hits: SearchHit[]; searchMs: number }> {
    const started = performance.now();
    const run = async () => {
      const { text, settings, deps } = await this.open(question, DEFAULT_TOP_K.retrieve);
      return retrieveChecked(text, deps, settings);
    };
    let result;
    try {
      result = await run();
    } catch (error) {
      // A base that switched its embedding model between the look-up and the search (ChangeEmbeddingModel):
      // looked up again, the question is embedded with the new model.
      if (!isStaleQueryVector(error)) throw error;
      result = await run();
    }
    return { hits: result.hits, searchMs: performance.now() - started };
  }

  async *chat(question: Question, signal?: AbortSignal): AsyncGenerator<AnswerEvent> {
    const { text, settings, deps } = await this.open(question, DEFAULT_TOP_K.chat);
    yield* answerChecked(
      text,
      { ...deps, countTokens: this.deps.countTokens, chatModel: this.deps.chatModel, embedForSupport: (texts) => this.deps.retriever.embedForSupport(texts), signal },
      { retrieval: settings, contextTokenBudget: this.deps.contextTokenBudget },
    );
  }

  private async open(question: Question, defaultTopK: number) {
    const o = question.options;
    const limits = { knowledgeBaseIds: question.knowledgeBases, topK: o.topK || defaultTopK, maxQuestionChars: this.deps.maxQuestionChars };
    const text = validateRetrieval(question.text, limits);
    const { knowledgeBases, deps } = await this.deps.retriever.open(text, o.mode, question.knowledgeBases);
    const settings: RetrievalSettings = {
      ...limits,
      knowledgeBaseIds: knowledgeBases.map((kb) => kb.id),
      mode: o.mode,
      minScore: o.minScore,
      documentIds: [...o.documentIds],
      embeddingModels: Object.fromEntries(knowledgeBases.map((kb) => [kb.id, kb.embeddingModel])),
    };
    return { text, settings, deps };
  }
}
