// Whether a managed correction answers the question asked. Retrieval over the corrections base
// always returns its best candidates, and in hybrid mode the best of any list scores alike (RRF
// ranks, not relevance), so a score cut on the hit would let an unrelated correction take every
// answer over. The gate compares the questions themselves: each wording the correction was given
// (the first lines of its document, read whole: whole-corrections.ts) against the question
// searched; the best one decides.
//
//   1. The same words once normalised (case, width, punctuation, spacing): relevant.
//   2. Otherwise the cosine similarity of the two questions' embeddings, from the corrections
//      base's own model, when it reads both (MIN_KNOWN_TOKEN_SHARE): relevant at the model's
//      threshold (similarityThreshold) or above.
//   3. When the model cannot read them (or the embedder is down), the Dice overlap of their content
//      words: relevant at CORRECTION_TERM_OVERLAP or above — the same words, perhaps reordered.
//
// The thresholds favour precision, measured by eval/correction-gate-study.ts (docs/ANSWERS.md,
// "Managed corrections"): a small bi-encoder scores a different question about the same subject
// ("When does the library close on Sundays?") nearly as high as a paraphrase, and a correction that
// answers the wrong question is worse than one that waits for a closer wording. Operators add
// wordings (one per line) to widen a correction's reach.
import type { SearchHit } from "../../../lib/domain.ts";
import { parseCorrectionText } from "../../../lib/correction-document.ts";
import { cosine } from "../answering/citation-verifier.ts";
import { stem } from "../answering/content-terms.ts";
import { analyseQuestion } from "../answering/question-analysis.ts";
import { MIN_KNOWN_TOKEN_SHARE, type QueryEmbedding } from "./retrieval-stage.ts";

/**
 * Per model, the lowest cosine at which at most about one in twenty different questions about the
 * same subject matched in the study (paraphrases matched: MiniLM 47%, bge-small-en 27%, bge-small-zh
 * 25%; other questions: 6.7%, 6.7%, 5% of the written pairs, 3.1% of 800 CMRC 2018 pairs).
 */
const MODEL_SIMILARITY: Record<string, number> = { "all-MiniLM-L6-v2-int8": 0.85, "bge-small-en-v1.5": 0.9, "bge-small-zh-v1.5": 0.9 };
/** For a model the study did not measure (an OpenAI-compatible endpoint's). */
export const DEFAULT_CORRECTION_SIMILARITY = 0.9;
/** Dice overlap of content words, for questions the embedding model cannot read: paraphrases share few words, so only the same words count. */
export const CORRECTION_TERM_OVERLAP = 0.9;

export function similarityThreshold(model: string): number {
  return MODEL_SIMILARITY[model] ?? DEFAULT_CORRECTION_SIMILARITY;
}
/** Candidates the corrections base contributes before the gate. */
export const CORRECTIONS_TOP_K = 3;

export type CorrectionMatchMethod = "same-question" | "embedding" | "terms" | "no-question";

export interface CorrectionMatch {
  /** The correction's wording that matched best; empty when the chunk does not start with one. */
  question: string;
  method: CorrectionMatchMethod;
  similarity: number;
  threshold: number;
  relevant: boolean;
}

/** How a question is embedded for the gate: the corrections base's model, and its name for the threshold. */
export interface QuestionEmbedder {
  model: string;
  /** Rejects when the embedder fails (the gate then compares words). */
  embed(text: string): Promise<QueryEmbedding>;
}

/** Each candidate's match (chunk id → match). */
export async function matchCorrections(query: string, hits: readonly SearchHit[], embedder: QuestionEmbedder | undefined): Promise<Map<string, CorrectionMatch>> {
  const matches = new Map<string, CorrectionMatch>();
  const asked = normaliseQuestion(query);
  let queryVector: Promise<QueryEmbedding | undefined> | undefined;
  const embedded = (text: string) => (embedder ? embedder.embed(text).catch(() => undefined) : Promise.resolve(undefined));
  const threshold = similarityThreshold(embedder?.model ?? "");
  const matchOne = async (question: string): Promise<CorrectionMatch> => {
    if (normaliseQuestion(question) === asked) return { question, method: "same-question", similarity: 1, threshold: 1, relevant: true };
    queryVector ??= embedded(query);
    const [a, b] = await Promise.all([queryVector, embedded(question)]);
    if (a && b && a.knownTokenShare >= MIN_KNOWN_TOKEN_SHARE && b.knownTokenShare >= MIN_KNOWN_TOKEN_SHARE) {
      const similarity = cosine(a.vector, b.vector);
      return { question, method: "embedding", similarity, threshold, relevant: similarity >= threshold };
    }
    const similarity = termOverlap(query, question);
    return { question, method: "terms", similarity, threshold: CORRECTION_TERM_OVERLAP, relevant: similarity >= CORRECTION_TERM_OVERLAP };
  };
  await Promise.all(
    hits.map(async (hit) => {
      const questions = parseCorrectionText(hit.chunk.text)?.questions ?? [];
      if (questions.length === 0) {
        matches.set(hit.chunk.id, { question: "", method: "no-question", similarity: 0, threshold: 1, relevant: false });
        return;
      }
      const each = await Promise.all(questions.map(matchOne));
      // The best wording: a relevant one first, then the closest.
      matches.set(hit.chunk.id, each.sort((x, y) => Number(y.relevant) - Number(x.relevant) || y.similarity - x.similarity)[0]);
    }),
  );
  return matches;
}

/** Case, width, punctuation and spacing do not make another question. */
export function normaliseQuestion(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/[\s\p{P}\p{S}]+/gu, "");
}

/** Dice coefficient of the two questions' content words (stemmed), 0..1. */
export function termOverlap(a: string, b: string): number {
  const x = new Set(analyseQuestion(a).terms.map(stem));
  const y = new Set(analyseQuestion(b).terms.map(stem));
  if (x.size + y.size === 0) return 0;
  let shared = 0;
  for (const t of x) if (y.has(t)) shared++;
  return (2 * shared) / (x.size + y.size);
}
