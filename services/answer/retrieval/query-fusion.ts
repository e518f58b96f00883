import type { SearchHit } from "../../../lib/domain.ts";

/** The usual reciprocal-rank constant; it damps the difference between rank 1 and rank 2. */
export const QUERY_RRF_K = 60;

/**
 * Fuses the hit lists of several searches for one question (multi-query variants) by reciprocal
 * rank: a chunk scores the sum of 1 / (k + rank) over the lists it appears in, so one that every
 * variant finds beats one a single variant ranks first. Each hit keeps its best list's chunk and
 * explain; its score becomes the fused score (the lists' own scores are not comparable).
 */
export function fuseQueryLists(lists: SearchHit[][], limit: number, k = QUERY_RRF_K): SearchHit[] {
  const fused = new Map<string, { hit: SearchHit; score: number; best: number }>();
  for (const hits of lists) {
    hits.forEach((hit, i) => {
      const entry = fused.get(hit.chunk.id);
      const share = 1 / (k + i + 1);
      if (!entry) fused.set(hit.chunk.id, { hit, score: share, best: i });
      else {
        entry.score += share;
        // A hit some list found on its own merits is not a fallback.
        if (i < entry.best || (entry.hit.explain.fallback && !hit.explain.fallback)) entry.hit = hit;
        entry.best = Math.min(entry.best, i);
      }
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.best - b.best || (a.hit.chunk.id < b.hit.chunk.id ? -1 : 1))
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score }));
}
