import type { RetrievalMode, SearchHit, SearchQuery } from "../../lib/domain.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { groupByModel, mergeByRank } from "./cross-model-merge.ts";

export const DEFAULT_MAX_QUESTION_CHARS = 4_000;

export interface RetrievalSettings {
  knowledgeBaseIds: string[];
  mode: RetrievalMode;
  topK: number;
  minScore: number;
  /** Restrict to these documents; empty means all. */
  documentIds: string[];
  candidates?: number;
  rrfK?: number;
  weights?: { bm25: number; vector: number };
  /** Longer questions are refused; 4,000 characters unless configured. */
  maxQuestionChars?: number;
  /**
   * Each knowledge base's embedding model (id → model). With more than one model among the bases,
   * vector and hybrid searches embed the question once per model (see cross-model-merge.ts).
   */
  embeddingModels?: Record<string, string>;
  /** Only documents whose metadata has every one of these key/value pairs. */
  metadataEquals?: Record<string, string>;
}

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
 * Finds the chunks for a question. The question is embedded only when the mode uses vectors.
 * Failures of the embedder or the search engine propagate: an empty result must mean "nothing
 * matched", never "the index was down", or the model would answer ungrounded.
 */
export async function retrieve(question: string, deps: RetrievalDeps, settings: RetrievalSettings): Promise<Retrieval> {
  const text = validateQuestion(question, settings);
  if (settings.knowledgeBaseIds.length === 0) throw new InvalidInputError("choose at least one knowledge base to ask");
  if (!Number.isInteger(settings.topK) || settings.topK < 1) throw new InvalidInputError(`topK must be a positive integer, not ${settings.topK}`);
  if (settings.mode !== "bm25" && settings.embeddingModels) {
    const groups = groupByModel(settings.embeddingModels, settings.knowledgeBaseIds);
    if (groups.length > 1) {
      const runs = await Promise.all(
        groups.map((group) =>
          retrieve(text, { ...deps, embed: (q) => deps.embed(q, group.model) }, { ...settings, knowledgeBaseIds: group.knowledgeBaseIds, embeddingModels: undefined }),
        ),
      );
      return { hits: mergeByRank(runs.map((r) => r.hits), settings.topK) };
    }
  }
  const only = settings.embeddingModels?.[settings.knowledgeBaseIds[0]];
  const embedding = settings.mode === "bm25" ? undefined : await deps.embed(text, only);
  const weights = { bm25: settings.weights?.bm25 ?? 1, vector: settings.weights?.vector ?? 1 };
  if (settings.mode === "hybrid" && embedding && embedding.knownTokenShare < MIN_KNOWN_TOKEN_SHARE) weights.vector = 0;
  const hits = await deps.search({
    knowledgeBaseIds: settings.knowledgeBaseIds,
    text,
    vector: embedding?.vector,
    mode: settings.mode,
    topK: settings.topK,
    minScore: settings.minScore,
    documentIds: settings.documentIds,
    candidates: settings.candidates,
    rrfK: settings.rrfK,
    weights: settings.mode === "hybrid" ? weights : settings.weights,
    ...(settings.metadataEquals ? { metadataEquals: settings.metadataEquals } : {}),
  });
  return {
    hits,
    knownTokenShare: embedding?.knownTokenShare,
    vectorWeight: settings.mode === "hybrid" ? weights.vector : undefined,
  };
}
