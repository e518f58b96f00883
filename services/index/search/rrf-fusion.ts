// Reciprocal Rank Fusion (Cormack et al., 2009) of the BM25 and vector lists. Pure and
// backend-free: the SQLite engine and the OpenSearch engine (when it cannot fuse natively) share it,
// so both explain a hybrid hit the same way.
import type { Chunk, HitExplain, SearchHit } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";

/** bm25 and vector rank chunks; document ranks whole documents by their document vectors. */
export type RankedListName = "bm25" | "vector" | "document";

export interface RankedList {
  name: RankedListName;
  /** Best first; the position is the rank, the score is kept for explanation only. */
  hits: { id: string; score: number }[];
  /** 1 when absent. */
  weight?: number;
  /**
   * false: the list only explains (its ranks and scores are reported) — it adds no score, breaks no
   * tie and brings no id of its own. The document-vector list is one: its evidence already votes
   * inside the vector list (document-level.ts).
   */
  votes?: boolean;
}

export interface FusedEntry {
  id: string;
  fusedScore: number;
  /** 1-based rank in each list the id appears in. */
  ranks: Partial<Record<RankedListName, number>>;
  scores: Partial<Record<RankedListName, number>>;
}

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

function compareFused(a: FusedEntry, b: FusedEntry, bestRank: ReadonlyMap<string, number>): number {
  if (b.fusedScore !== a.fusedScore) return b.fusedScore - a.fusedScore;
  const rankOrder = bestRank.get(a.id)! - bestRank.get(b.id)!;
  if (rankOrder !== 0) return rankOrder;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
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
}

/** Fuses engine hit lists into SearchHits, each with its explanation (0 for a list it is absent from). */
export function fuseHits(lists: EngineHitList[], options: FuseHitsOptions = {}): SearchHit[] {
  const byId = new Map<string, EngineHit>();
  for (const list of lists) for (const hit of list.hits) if (!byId.has(hit.chunk.id)) byId.set(hit.chunk.id, hit);
  const fused = fuseReciprocalRank(
    lists.map((list) => ({ name: list.name, weight: list.weight, votes: list.votes, hits: list.hits.map((hit) => ({ id: hit.chunk.id, score: hit.score })) })),
    options.k ?? DEFAULT_RRF_K,
  );
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
    };
    const score = scoreFrom === "fused" ? entry.fusedScore : (entry.scores[scoreFrom] ?? 0);
    return { chunk: hit.chunk, fileName: hit.fileName, score, explain };
  });
}
