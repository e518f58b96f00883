import type { SearchHit } from "../../../../lib/domain.ts";
import { inSpan } from "../../../../lib/tracing/spans.ts";

/** One candidate's relevance as a reranker judged it: `index` into the texts it was given. */
export interface RerankScore {
  index: number;
  score: number;
}

/**
 * Scores texts against a query. Implementations: HTTP rerank APIs (TEI's /rerank, the
 * Jina/Cohere-style /v1/rerank) and the chat model asked pointwise. A reranker may leave texts out
 * of its answer (a top_n cut); it throws when it cannot answer at all.
 */
export interface Reranker {
  /** Says which reranker ordered the hits, e.g. "tei http://host:8080/rerank"; never a key. */
  readonly name: string;
  rerank(query: string, texts: string[], options?: { signal?: AbortSignal }): Promise<RerankScore[]>;
}

/**
 * How many fused candidates a reranked search asks for per hit it returns. A reranker can only
 * promote what it is shown: 3 × top-k gives it the near misses without paying to score a whole list.
 */
export const RERANK_CANDIDATE_FACTOR = 3;

export interface RerankOutcome {
  hits: SearchHit[];
  /** Set when the fused order was kept, with why. */
  skipped?: string;
  /** How many candidates the reranker scored. */
  reranked: number;
}

/**
 * Orders the widened candidates by the reranker's scores and keeps top-k. Candidates the reranker
 * left out follow in their fused order. When the reranker fails or answers nonsense, the fused
 * order stands and the outcome says why: a rerank is an improvement, never a reason to answer nothing.
 */
export async function rerankHits(query: string, candidates: SearchHit[], reranker: Reranker, topK: number, signal?: AbortSignal): Promise<RerankOutcome> {
  if (candidates.length === 0) return { hits: [], reranked: 0 };
  let scores: RerankScore[];
  try {
    scores = await inSpan("rerank", { "quarry.reranker": reranker.name, "quarry.candidates": candidates.length }, () =>
      reranker.rerank(
        query,
        candidates.map((hit) => hit.chunk.text),
        { signal },
      ),
    );
    const bad = scores.find((s) => !Number.isInteger(s.index) || s.index < 0 || s.index >= candidates.length || !Number.isFinite(s.score));
    if (bad) throw new Error(`answered index ${bad.index} with score ${bad.score} for ${candidates.length} candidates`);
  } catch (err) {
    if (signal?.aborted) throw err;
    return { hits: candidates.slice(0, topK), skipped: `${reranker.name} failed: ${(err as Error).message}`, reranked: 0 };
  }
  const scoreOf = new Map<number, number>();
  for (const s of scores) if (!scoreOf.has(s.index)) scoreOf.set(s.index, s.score);
  const order = candidates
    .map((hit, i) => ({ hit, i, score: scoreOf.get(i) }))
    .sort((a, b) => {
      if (a.score !== undefined && b.score !== undefined) return b.score - a.score || a.i - b.i;
      if (a.score !== undefined) return -1;
      if (b.score !== undefined) return 1;
      return a.i - b.i;
    });
  return {
    hits: order.slice(0, topK).map(({ hit, score }) => (score === undefined ? hit : { ...hit, explain: { ...hit.explain, rerankScore: score } })),
    reranked: scoreOf.size,
  };
}
