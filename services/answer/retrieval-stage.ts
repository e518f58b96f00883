import type { RetrievalMode, SearchHit, SearchQuery } from "../../lib/domain.ts";
import { InvalidInputError } from "../../lib/errors.ts";

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
}

export interface RetrievalDeps {
  /** The question's vector from the knowledge bases' embedding model. */
  embed(question: string): Promise<Float32Array>;
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
export async function retrieve(question: string, deps: RetrievalDeps, settings: RetrievalSettings): Promise<SearchHit[]> {
  const text = validateQuestion(question, settings);
  if (settings.knowledgeBaseIds.length === 0) throw new InvalidInputError("choose at least one knowledge base to ask");
  if (!Number.isInteger(settings.topK) || settings.topK < 1) throw new InvalidInputError(`topK must be a positive integer, not ${settings.topK}`);
  const vector = settings.mode === "bm25" ? undefined : await deps.embed(text);
  return deps.search({
    knowledgeBaseIds: settings.knowledgeBaseIds,
    text,
    vector,
    mode: settings.mode,
    topK: settings.topK,
    minScore: settings.minScore,
    documentIds: settings.documentIds,
    candidates: settings.candidates,
    rrfK: settings.rrfK,
    weights: settings.weights,
  });
}
