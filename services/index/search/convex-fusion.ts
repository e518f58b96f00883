// Convex combination of normalised scores (Bruch, Gai, Ingber, "An Analysis of Fusion Functions for
// Hybrid Retrieval", 2022): each list's scores are mapped onto [0, 1] and an id scores
// α · vector + (1 − α) · bm25. Unlike reciprocal rank fusion it keeps how far apart the scores
// are, so a chunk far ahead in one list is not pulled level with a near-tie in the other.
//
// Two normalisations from the paper: min-max over the list as retrieved, and theoretical-min
// ("TM2C2"): the lower end is the lowest score the list's function can give (BM25 0, cosine −1)
// rather than the last candidate's, so the scale does not depend on how deep the list was read.
// An id absent from a list gets that list's 0. α = 0.8 is the paper's value for TM2C2, tuned once on
// MS MARCO and applied unchanged to BEIR; Quarry keeps it fixed (docs/EVALUATION.md, "Fusion").
import { InvalidInputError } from "../../../lib/errors.ts";
import { compareFused, type FusedEntry, type RankedList, type RankedListName } from "./ranked-lists.ts";

export type ScoreNormalisation = "min-max" | "theoretical-min";

export interface ConvexFusionOptions {
  /** The vector list's share, in [0, 1]; BM25 gets 1 − alpha. */
  alpha?: number;
  normalisation?: ScoreNormalisation;
}

export const DEFAULT_CONVEX_ALPHA = 0.8;
export const DEFAULT_NORMALISATION: ScoreNormalisation = "theoretical-min";

/** A rule's alpha as given (a request's, an assistant's): InvalidInput outside [0, 1]. */
export function checkConvexAlpha(alpha: number): number {
  if (!Number.isFinite(alpha) || alpha < 0 || alpha > 1) throw new InvalidInputError(`the convex fusion weight alpha must be between 0 and 1, got ${alpha}`);
  return alpha;
}

/** The lowest score each list's function can give: BM25 is a sum of non-negative terms, cosine ≥ −1. */
const THEORETICAL_MIN: Record<RankedListName, number> = { bm25: 0, vector: -1, document: -1 };

export interface ConvexEntry extends FusedEntry {
  /** Each list's score after normalisation, 0–1 (absent: not in that list). */
  normalised: Partial<Record<RankedListName, number>>;
}

/** The [0, 1] scale of one list: lower end by the rule, upper end the list's best score. */
function scaleOf(list: RankedList, normalisation: ScoreNormalisation): (score: number) => number {
  if (list.hits.length === 0) return () => 0;
  let max = -Infinity;
  let min = Infinity;
  for (const hit of list.hits) {
    max = Math.max(max, hit.score);
    min = Math.min(min, hit.score);
  }
  const low = normalisation === "min-max" ? min : Math.min(THEORETICAL_MIN[list.name], min);
  // A list whose scores are all equal says nothing about order between its hits: each counts fully.
  if (max === low) return () => 1;
  return (score) => (score - low) / (max - low);
}

/** The list weight of each list: α for vector, 1 − α for BM25, times the list's own weight (the hybrid gate's 0). */
function shareOf(name: RankedListName, alpha: number): number {
  return name === "bm25" ? 1 - alpha : alpha;
}

/**
 * Fuses ranked lists by a convex combination of their normalised scores. A list with votes: false
 * only explains, as in fuseReciprocalRank. Sorted by fused score, then best single rank, then id.
 */
export function fuseConvex(lists: RankedList[], options: ConvexFusionOptions = {}): ConvexEntry[] {
  const alpha = checkConvexAlpha(options.alpha ?? DEFAULT_CONVEX_ALPHA);
  const normalisation = options.normalisation ?? DEFAULT_NORMALISATION;
  const entries = new Map<string, ConvexEntry>();
  const bestRank = new Map<string, number>();
  const voting = lists.filter((list) => list.votes !== false);
  for (const list of [...voting, ...lists.filter((list) => list.votes === false)]) {
    const weight = list.weight ?? 1;
    if (!Number.isFinite(weight) || weight < 0) throw new InvalidInputError(`fusion weight for ${list.name} must be >= 0, got ${weight}`);
    const votes = list.votes !== false;
    const scale = scaleOf(list, normalisation);
    list.hits.forEach((hit, position) => {
      let entry = entries.get(hit.id);
      if (!entry) {
        if (!votes) return;
        entry = { id: hit.id, fusedScore: 0, ranks: {}, scores: {}, normalised: {} };
        entries.set(hit.id, entry);
      }
      if (entry.ranks[list.name] !== undefined) return;
      const rank = position + 1;
      const normalised = scale(hit.score);
      entry.ranks[list.name] = rank;
      entry.scores[list.name] = hit.score;
      entry.normalised[list.name] = normalised;
      if (!votes) return;
      entry.fusedScore += weight * shareOf(list.name, alpha) * normalised;
      bestRank.set(hit.id, Math.min(bestRank.get(hit.id) ?? Infinity, rank));
    });
  }
  return [...entries.values()].sort((a, b) => compareFused(a, b, bestRank));
}
