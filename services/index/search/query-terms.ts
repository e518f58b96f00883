// How much each term of a question counts in BM25. BM25 reads the question the way it reads a
// document: a term the question says q times weighs q·(K + 1) / (K + q), with
// K = k1·(1 − b + b·question length / average chunk length) — the same saturation and length
// normalisation, with the same constants (k1 = 1.2, b = 0.75, FTS5's and Lucene's), that it applies
// to a chunk's term frequency. A term said once weighs 1 (scores stay comparable with a question that
// repeats nothing). A short question's repetition is mostly sentence structure ("sequence data …
// than unassembled sequence data") and counts little; a question as long as a chunk or longer (a
// whole argument, a pasted paragraph) repeats its subject and counts it nearly in full. Counting
// each term once, or every repetition in full (Lucene's match query), was measured against it in
// docs/EVALUATION.md; no constant here is tuned to a benchmark set.
import { NO_STOP_WORDS } from "./stop-words.ts";
import { queryTermCounts } from "./text-segmenter.ts";

/** BM25's k1 and b in FTS5 and Lucene (their defaults; Quarry changes neither). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** The size of the keyword index a question is searched in: rows and the terms they hold in all. */
export interface KeywordIndexSize {
  rows: number;
  terms: number;
}

/**
 * The weight of a term the question says `count` times, in a question of `questionLength` terms,
 * against chunks of `averageLength` terms (unknown or empty: no length normalisation).
 */
export function queryTermWeight(count: number, questionLength: number, averageLength: number): number {
  const lengthRatio = averageLength > 0 ? questionLength / averageLength : 1;
  const k = BM25_K1 * (1 - BM25_B + BM25_B * lengthRatio);
  return (count * (k + 1)) / (k + count);
}

/** The average row length of a keyword index (or of several searched together); 0 when empty. */
export function averageRowLength(sizes: readonly KeywordIndexSize[]): number {
  const rows = sizes.reduce((sum, size) => sum + size.rows, 0);
  return rows > 0 ? sizes.reduce((sum, size) => sum + size.terms, 0) / rows : 0;
}

/** Terms that share one weight: the question's terms said equally often. */
export interface WeightedTerms {
  weight: number;
  terms: string[];
}

/**
 * The question's distinct terms grouped by weight, terms said once first, leaving out `stopWords`;
 * no groups for a question without searchable words (or with stop words only: then the keyword list
 * is empty and a hybrid search is the vector list alone). BM25 is a sum over terms, so the weighted
 * score is Σ weight × BM25(terms). Every backend searches with every word today: leaving out
 * ENGLISH_STOP_WORDS (stop-words.ts) is measured by eval/stop-word-study.ts and waits for ArguAna.
 */
export function weightedQueryTerms(text: string, averageLength: number, stopWords: ReadonlySet<string> = NO_STOP_WORDS): WeightedTerms[] {
  const counts = new Map([...queryTermCounts(text)].filter(([term]) => !stopWords.has(term)));
  const questionLength = [...counts.values()].reduce((sum, count) => sum + count, 0);
  const groups = new Map<number, string[]>();
  for (const [term, count] of counts) groups.set(count, [...(groups.get(count) ?? []), term]);
  return [...groups]
    .sort(([a], [b]) => a - b)
    .map(([count, terms]) => ({ weight: queryTermWeight(count, questionLength, averageLength), terms }));
}
