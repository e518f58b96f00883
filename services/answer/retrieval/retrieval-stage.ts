import type { SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { groupByModel, mergeByRank } from "./cross-model-merge.ts";

/**
 * A page or two of pasted text (an argument, a bug report with its log). The embedder reads a
 * question longer than its model's input whole, in windows, so a long question is not wasted; the
 * limit only keeps one question from costing what a document does.
 */
export const DEFAULT_MAX_QUESTION_CHARS = 8_000;

/** What a retrieval searches with: a search query without the question's text and vector, plus limits. */
export type RetrievalSettings = Omit<SearchQuery, "text" | "vector"> & {
  /** Longer questions are refused; DEFAULT_MAX_QUESTION_CHARS unless configured. */
  maxQuestionChars?: number;
  /**
   * Each knowledge base's embedding model (id → model). With more than one model among the bases,
   * vector and hybrid searches embed the question once per model (see cross-model-merge.ts).
   */
  embeddingModels?: Record<string, string>;
};

export interface QueryEmbedding {
  vector: Float32Array;
  /** Share of the question's word pieces the embedding model knows; see Embedder.knownTokenShare. */
  knownTokenShare: number;
}

/**
 * Below this share the model reads less of the question than it guesses, so its vector list is
 * noise. Fused at equal weight, noise reorders the keyword list's near-ties at random (on cMedIR,
 * Chinese queries read by an English model, hybrid fell from BM25's 0.715 nDCG@10 to 0.468), so a
 * hybrid search then gives the vector list no weight; its ranks still show in each hit's explain.
 * "Reads" means in the model's vocabulary and in a script it was trained on (KnownTokenShare).
 */
export const MIN_KNOWN_TOKEN_SHARE = 0.5;

export interface Retrieval {
  hits: SearchHit[];
  /** Set when the question was embedded. */
  knownTokenShare?: number;
  /** The weight the vector list got in fusion (hybrid only). */
  vectorWeight?: number;
}

export interface RetrievalDeps {
  /** The question's vector from the given embedding model (the knowledge bases' when absent). */
  embed(question: string, model?: string): Promise<QueryEmbedding>;
  search(query: SearchQuery): Promise<SearchHit[]>;
  /**
   * Retrieval other than one search over the settings' bases (an assistant's bases, each on its
   * own). The retrieval options (fallback, fill, HyDE, multi-query) call it in place of retrieve,
   * with the settings and embedding they chose.
   */
  retrieveFor?: (question: string, deps: RetrievalDeps, settings: RetrievalSettings) => Promise<Retrieval>;
}

/** Checks a question against the settings' limits; returns it trimmed. */
export function validateQuestion(question: string, settings: Pick<RetrievalSettings, "maxQuestionChars">): string {
  const trimmed = question.trim();
  if (!trimmed) throw new InvalidInputError("the question is empty");
  const limit = settings.maxQuestionChars ?? DEFAULT_MAX_QUESTION_CHARS;
  if (trimmed.length > limit) {
    throw new InvalidInputError(`the question is ${trimmed.length} characters long; the limit is ${limit.toLocaleString("en-US")} characters`);
  }
  return trimmed;
}

/**
 * Checks a question and its settings once, before anything is looked up or embedded; returns the
 * question trimmed, for retrieveChecked.
 */
export function validateRetrieval(question: string, settings: Pick<RetrievalSettings, "maxQuestionChars" | "knowledgeBaseIds" | "topK">): string {
  const text = validateQuestion(question, settings);
  if (settings.knowledgeBaseIds.length === 0) throw new InvalidInputError("choose at least one knowledge base");
  if (!Number.isInteger(settings.topK) || settings.topK < 1) throw new InvalidInputError(`topK must be a positive integer, not ${settings.topK}`);
  return text;
}

/**
 * Finds the chunks for a question. The question is embedded only when the mode uses vectors.
 * Failures of the embedder or the search engine propagate: an empty result must mean "nothing
 * matched", never "the index was down", or the model would answer ungrounded.
 */
export async function retrieve(question: string, deps: RetrievalDeps, settings: RetrievalSettings): Promise<Retrieval> {
  return retrieveChecked(validateRetrieval(question, settings), deps, settings);
}

/** retrieve for a question validateRetrieval has accepted (and trimmed) with these settings. */
export async function retrieveChecked(text: string, deps: RetrievalDeps, settings: RetrievalSettings): Promise<Retrieval> {
  const { maxQuestionChars: _limit, embeddingModels, ...query } = settings;
  if (query.mode !== "bm25" && embeddingModels) {
    const groups = groupByModel(embeddingModels, query.knowledgeBaseIds);
    if (groups.length > 1) {
      const runs = await Promise.all(
        groups.map((group) => retrieveChecked(text, { ...deps, embed: (q) => deps.embed(q, group.model) }, { ...query, knowledgeBaseIds: group.knowledgeBaseIds })),
      );
      return { hits: mergeByRank(runs.map((r) => r.hits), query.topK) };
    }
  }
  const only = embeddingModels?.[query.knowledgeBaseIds[0]];
  const embedding = query.mode === "bm25" ? undefined : await deps.embed(text, only);
  const weights = { bm25: query.weights?.bm25 ?? 1, vector: query.weights?.vector ?? 1 };
  if (query.mode === "hybrid" && embedding && embedding.knownTokenShare < MIN_KNOWN_TOKEN_SHARE) weights.vector = 0;
  const hits = await deps.search({ ...query, text, vector: embedding?.vector, weights: query.mode === "hybrid" ? weights : query.weights });
  return {
    hits,
    knownTokenShare: embedding?.knownTokenShare,
    vectorWeight: query.mode === "hybrid" ? weights.vector : undefined,
  };
}
