// What every fusion rule takes and gives: ranked lists in, fused entries out, ordered the same way
// (rrf-fusion.ts, convex-fusion.ts).

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

/** Fused score first, then the best single rank, then id: equal inputs always give the same order. */
export function compareFused(a: FusedEntry, b: FusedEntry, bestRank: ReadonlyMap<string, number>): number {
  if (b.fusedScore !== a.fusedScore) return b.fusedScore - a.fusedScore;
  const rankOrder = bestRank.get(a.id)! - bestRank.get(b.id)!;
  if (rankOrder !== 0) return rankOrder;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

