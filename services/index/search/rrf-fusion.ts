// Reciprocal Rank Fusion (Cormack et al., 2009) of the BM25 and vector lists. Pure and
// backend-free: the SQLite engine and the OpenSearch engine (when it cannot fuse natively) share it,
// so both explain a hybrid hit the same way.
import type { Chunk, HitExplain, SearchHit } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { compareFused, type FusedEntry, type RankedList, type RankedListName } from "./ranked-lists.ts";
import { DEFAULT_CONVEX_ALPHA, fuseConvex, type ConvexEntry, type ConvexFusionOptions } from "./convex-fusion.ts";

export type { FusedEntry, RankedList, RankedListName } from "./ranked-lists.ts";

export const DEFAULT_RRF_K = 60;

/**
 * Fuses ranked lists: each id scores Σ weight / (k + rank). Sorted by fused score, then by the best
 * single rank, then by id, so equal inputs always give the same order.
 */
export function fuseReciprocalRank(lists: RankedList[], k: number = DEFAULT_RRF_K): FusedEntry[] {
  if (!Number.isFinite(k) || k <= 0) throw new InvalidInputError(`RRF k must be a positive number, got ${k}`);
  const entries = new Map<string, FusedEntry>();
  const bestRank = new Map<string, number>();
  const voting = lists.filter((list) => list.votes !== false);
  for (const list of [...voting, ...lists.filter((list) => list.votes === false)]) {
    const weight = list.weight ?? 1;
    if (!Number.isFinite(weight) || weight < 0) throw new InvalidInputError(`RRF weight for ${list.name} must be >= 0, got ${weight}`);
    const votes = list.votes !== false;
    list.hits.forEach((hit, position) => {
      let entry = entries.get(hit.id);
      if (!entry) {
        if (!votes) return;
        entry = { id: hit.id, fusedScore: 0, ranks: {}, scores: {} };
        entries.set(hit.id, entry);
      }
      // An id repeated within one list counts once, at its best rank.
      if (entry.ranks[list.name] !== undefined) return;
      const rank = position + 1;
      entry.ranks[list.name] = rank;
      entry.scores[list.name] = hit.score;
      if (!votes) return;
      entry.fusedScore += weight / (k + rank);
      bestRank.set(hit.id, Math.min(bestRank.get(hit.id) ?? Infinity, rank));
    });
  }
  return [...entries.values()].sort((a, b) => compareFused(a, b, bestRank));
}

/** A hit as one retrieval list of an engine produces it, before fusion. */
export interface EngineHit {
  chunk: Chunk;
  fileName: string;
  /** The list's own score: positive BM25 score or cosine similarity. */
  score: number;
}

export interface EngineHitList {
  name: RankedListName;
  hits: EngineHit[];
  weight?: number;
  votes?: boolean;
}

export interface FuseHitsOptions {
  k?: number;
  /**
   * Which number becomes SearchHit.score: the fused score (hybrid), or one list's own score when a
   * single-list mode only uses fusion to fill the explanation.
   */
  scoreFrom?: "fused" | RankedListName;
  /** Convex combination of normalised scores instead of reciprocal rank (k is then unused). */
  convex?: ConvexFusionOptions;
}

/** Fuses engine hit lists into SearchHits, each with its explanation (0 for a list it is absent from). */
export function fuseHits(lists: EngineHitList[], options: FuseHitsOptions = {}): SearchHit[] {
  const byId = new Map<string, EngineHit>();
  for (const list of lists) for (const hit of list.hits) if (!byId.has(hit.chunk.id)) byId.set(hit.chunk.id, hit);
  const ranked = lists.map((list) => ({ name: list.name, weight: list.weight, votes: list.votes, hits: list.hits.map((hit) => ({ id: hit.chunk.id, score: hit.score })) }));
  const fused: (FusedEntry & Partial<ConvexEntry>)[] = options.convex ? fuseConvex(ranked, options.convex) : fuseReciprocalRank(ranked, options.k ?? DEFAULT_RRF_K);
  const alpha = options.convex?.alpha ?? DEFAULT_CONVEX_ALPHA;
  const scoreFrom = options.scoreFrom ?? "fused";
  return fused.map((entry) => {
    const hit = byId.get(entry.id)!;
    const explain: HitExplain = {
      bm25Rank: entry.ranks.bm25 ?? 0,
      bm25Score: entry.scores.bm25 ?? 0,
      vectorRank: entry.ranks.vector ?? 0,
      vectorScore: entry.scores.vector ?? 0,
      fusedScore: entry.fusedScore,
      ...(entry.ranks.document ? { documentRank: entry.ranks.document, documentScore: entry.scores.document } : {}),
      ...(entry.normalised ? { convex: { bm25Normalised: entry.normalised.bm25 ?? 0, vectorNormalised: entry.normalised.vector ?? 0, vectorWeight: alpha } } : {}),
    };
    const score = scoreFrom === "fused" ? entry.fusedScore : (entry.scores[scoreFrom] ?? 0);
    return { chunk: hit.chunk, fileName: hit.fileName, score, explain };
  });
}
