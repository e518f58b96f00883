// Retrieval metrics as BEIR reports them. BEIR computes nDCG@k and Recall@k with pytrec_eval
// (trec_eval's ndcg_cut and recall: linear gain, log2 discount, relevance = judgement > 0) and
// MRR@k with its own code. Hand-written because the definitions are a few lines each and no
// maintained npm package implements trec_eval; the unit tests pin them to hand-computed cases.
import type { Qrels } from "./beir-dataset.ts";

/** A judged ranking: doc ids best first (already deduplicated) and the query's judgements. */
export interface JudgedRanking {
  ranked: readonly string[];
  relevant: ReadonlyMap<string, number>;
}

/**
 * nDCG@k with trec_eval's definition: DCG = Σ_{i=1..k} rel_i / log2(i + 1), divided by the DCG of
 * the ideal ordering of all judged-relevant documents. 0 when nothing is relevant.
 */
export function ndcgAt(k: number, { ranked, relevant }: JudgedRanking): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    dcg += (relevant.get(id) ?? 0) / Math.log2(i + 2);
  });
  const ideal = [...relevant.values()].filter((r) => r > 0).sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((sum, rel, i) => sum + rel / Math.log2(i + 2), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

/** Recall@k: the share of the relevant documents found in the first k. */
export function recallAt(k: number, { ranked, relevant }: JudgedRanking): number {
  const total = [...relevant.values()].filter((r) => r > 0).length;
  if (total === 0) return 0;
  const found = ranked.slice(0, k).filter((id) => (relevant.get(id) ?? 0) > 0).length;
  return found / total;
}

/** Reciprocal rank of the first relevant document within the first k; 0 when none is there. */
export function mrrAt(k: number, { ranked, relevant }: JudgedRanking): number {
  const position = ranked.slice(0, k).findIndex((id) => (relevant.get(id) ?? 0) > 0);
  return position < 0 ? 0 : 1 / (position + 1);
}

/**
 * Turns a query's hits (one per chunk, best first) into a document ranking: each document takes
 * the rank of its best chunk and later chunks of the same document are dropped (the MaxP rule of
 * passage retrieval). A hit whose id equals the query id is dropped too, as BEIR does by default
 * (ignore_identical_ids), so a corpus that contains the queries cannot reward finding them.
 */
export function documentRanking(queryId: string, hitDocIds: readonly string[]): string[] {
  const seen = new Set<string>();
  const ranked: string[] = [];
  for (const id of hitDocIds) {
    if (id === queryId || seen.has(id)) continue;
    seen.add(id);
    ranked.push(id);
  }
  return ranked;
}

export interface MetricSummary {
  ndcgAt10: number;
  recallAt100: number;
  mrrAt10: number;
  queries: number;
}

/** Means over the judged queries; a query with no run counts as 0, as in BEIR. */
export function summarize(qrels: Qrels, runs: ReadonlyMap<string, readonly string[]>): MetricSummary {
  let ndcg = 0;
  let recall = 0;
  let mrr = 0;
  for (const [queryId, relevant] of qrels) {
    const judged = { ranked: runs.get(queryId) ?? [], relevant };
    ndcg += ndcgAt(10, judged);
    recall += recallAt(100, judged);
    mrr += mrrAt(10, judged);
  }
  const n = qrels.size;
  return n === 0 ? { ndcgAt10: 0, recallAt100: 0, mrrAt10: 0, queries: 0 } : { ndcgAt10: ndcg / n, recallAt100: recall / n, mrrAt10: mrr / n, queries: n };
}

/** Nearest-rank percentile (p in 0..100) of the values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}
