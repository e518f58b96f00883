// Whether a managed correction answers the question asked. Retrieval over the corrections base
// always returns its best candidates, and in hybrid mode the best of any list scores alike (RRF
// ranks, not relevance), so a score cut on the hit would let an unrelated correction take every
// answer over. The gate compares the two questions themselves: the correction's wording (the
// first line of its document) against the question searched.
//
//   1. The same words once normalised (case, width, punctuation, spacing): relevant.
//   2. Otherwise the cosine similarity of the two questions' embeddings, from the corrections
//      base's own model, when it reads both (MIN_KNOWN_TOKEN_SHARE): relevant at
//      CORRECTION_SIMILARITY or above.
//   3. When the model cannot read them (or the embedder is down), the Dice overlap of their content
//      words: relevant at CORRECTION_TERM_OVERLAP or above.
//
// The thresholds are measured in docs/ANSWERS.md ("Managed corrections"): paraphrases of a question
// against different questions about the same subject.
import type { SearchHit } from "../../lib/domain.ts";
import { parseCorrectionText } from "../../lib/correction-document.ts";
import { cosine } from "./citation-verifier.ts";
import { stem } from "./content-terms.ts";
import { analyseQuestion } from "./question-analysis.ts";
import { MIN_KNOWN_TOKEN_SHARE, type QueryEmbedding } from "./retrieval-stage.ts";

/** all-MiniLM-L6-v2 and bge-small: paraphrases score above, other questions on the same subject below. */
export const CORRECTION_SIMILARITY = 0.8;
/** Dice overlap of content words, for questions the embedding model cannot read. */
export const CORRECTION_TERM_OVERLAP = 0.7;
/** Candidates the corrections base contributes before the gate. */
export const CORRECTIONS_TOP_K = 3;

export type CorrectionMatchMethod = "same-question" | "embedding" | "terms" | "no-question";

export interface CorrectionMatch {
  /** The correction's question wording; empty when the chunk does not start with one. */
  question: string;
  method: CorrectionMatchMethod;
  similarity: number;
  threshold: number;
  relevant: boolean;
}

/** The question's embedding, from the corrections base's model; rejects when the embedder fails. */
export type QuestionEmbedder = (text: string) => Promise<QueryEmbedding>;

/** Each candidate's match (chunk id → match), the embeddings asked for together. */
export async function matchCorrections(query: string, hits: readonly SearchHit[], embed: QuestionEmbedder | undefined): Promise<Map<string, CorrectionMatch>> {
  const matches = new Map<string, CorrectionMatch>();
  const asked = normaliseQuestion(query);
  let queryVector: Promise<QueryEmbedding | undefined> | undefined;
  const embedded = (text: string) => (embed ? embed(text).catch(() => undefined) : Promise.resolve(undefined));
  await Promise.all(
    hits.map(async (hit) => {
      const question = parseCorrectionText(hit.chunk.text)?.question ?? "";
      if (!question) {
        matches.set(hit.chunk.id, { question, method: "no-question", similarity: 0, threshold: 1, relevant: false });
        return;
      }
      if (normaliseQuestion(question) === asked) {
        matches.set(hit.chunk.id, { question, method: "same-question", similarity: 1, threshold: 1, relevant: true });
        return;
      }
      queryVector ??= embedded(query);
      const [a, b] = await Promise.all([queryVector, embedded(question)]);
      if (a && b && a.knownTokenShare >= MIN_KNOWN_TOKEN_SHARE && b.knownTokenShare >= MIN_KNOWN_TOKEN_SHARE) {
        const similarity = cosine(a.vector, b.vector);
        matches.set(hit.chunk.id, { question, method: "embedding", similarity, threshold: CORRECTION_SIMILARITY, relevant: similarity >= CORRECTION_SIMILARITY });
        return;
      }
      const similarity = termOverlap(query, question);
      matches.set(hit.chunk.id, { question, method: "terms", similarity, threshold: CORRECTION_TERM_OVERLAP, relevant: similarity >= CORRECTION_TERM_OVERLAP });
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
