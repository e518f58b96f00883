// Retrieval over an assistant's knowledge bases. Each base is searched on its own, for its own
// top-k, so a large base cannot crowd a small one out of a shared top-k; then the lists are fused
// with their priorities respected:
//
//   1. Priority bands: every hit of a base with a higher priority ranks before every hit of a base
//      with a lower one. A priority states which source an operator trusts more, so it is not
//      traded against scores.
//   2. Within a band, bases are ordered by their best hit's score, ties by the order they are
//      mounted in. Scores of one mode are comparable across bases (hybrid: the fused RRF score;
//      vector: cosine); BM25 scores depend on each base's statistics, so for keyword search the
//      order within a band is a heuristic — give bases different priorities to fix it.
//   3. A base's hits keep their own order, one after the other: the fused list is grouped by base,
//      so the numbered context shows each base's chunks together.
//   0. Before all of that, source kind: the assistant's corrections base (managed corrections,
//      correction-match.ts) contributes only the corrections whose question matches the one asked,
//      and those rank before every document, whatever the priorities and scores.
//   4. A chunk found through two bases (it cannot be, today: chunks belong to one base) would keep
//      its first place.
import type { SearchHit } from "../../../lib/domain.ts";
import { matchCorrections, type CorrectionMatch, type QuestionEmbedder } from "./correction-match.ts";
import { retrieve, type Retrieval, type RetrievalDeps, type RetrievalSettings } from "./retrieval-stage.ts";
import { readWholeCorrections, type ChunksAt } from "./whole-corrections.ts";

/** How much deeper the corrections base is searched than its top-k: several chunks may be one correction. */
const CORRECTION_SEARCH_FACTOR = 4;

export interface Mount {
  knowledgeBaseId: string;
  /** Hits this base contributes; 0: the settings' topK. */
  topK: number;
  priority: number;
  /**
   * Set for the assistant's corrections base: how its candidates' questions are embedded for the
   * gate, and how a candidate's whole correction is read (whole-corrections.ts; absent: as found).
   */
  corrections?: { embedder?: QuestionEmbedder; chunksAt?: ChunksAt };
}

/** One base's search, as it came back. */
export interface CandidateList extends Retrieval {
  knowledgeBaseId: string;
  priority: number;
  topK: number;
  /** The corrections base's list: each candidate's match (chunk id → match); only relevant ones are fused. */
  corrections?: Map<string, CorrectionMatch>;
}

export interface FusedRetrieval extends Retrieval {
  lists: CandidateList[];
  /** The rank each hit had in its own base's list (chunk id → rank). */
  listRank: Map<string, number>;
}

export const FUSION_RULE =
  "matching corrections first; then priority bands (higher first); within a band, bases by their best hit's score; each base's hits in its own order, grouped by base";

/** Searches each mounted base for its own top-k and fuses the lists (see the rule above). */
export async function retrieveMounted(question: string, deps: RetrievalDeps, mounts: Mount[], settings: RetrievalSettings): Promise<FusedRetrieval> {
  const lists = await Promise.all(
    mounts.map(async (mount): Promise<CandidateList> => {
      const topK = mount.topK || settings.topK;
      const { corrections } = mount;
      // A long correction's chunks are one candidate once read whole, so its chunks are searched
      // deeper to still yield topK corrections.
      const searchK = corrections?.chunksAt ? topK * CORRECTION_SEARCH_FACTOR : topK;
      const run = await retrieve(question, deps, { ...settings, knowledgeBaseIds: [mount.knowledgeBaseId], topK: searchK });
      const list: CandidateList = { ...run, knowledgeBaseId: mount.knowledgeBaseId, priority: mount.priority, topK };
      if (corrections) {
        if (corrections.chunksAt) list.hits = (await readWholeCorrections(run.hits, corrections.chunksAt)).slice(0, topK);
        list.corrections = await matchCorrections(question, list.hits, corrections.embedder);
      }
      return list;
    }),
  );
  const hits = fuseByPriority(lists);
  const listRank = new Map<string, number>();
  for (const list of lists) list.hits.forEach((hit, i) => listRank.set(hit.chunk.id, i + 1));
  return { hits, lists, listRank };
}

export function fuseByPriority(lists: readonly Pick<CandidateList, "priority" | "hits" | "corrections">[]): SearchHit[] {
  const best = (hits: SearchHit[]) => hits.reduce((top, h) => Math.max(top, h.score), Number.NEGATIVE_INFINITY);
  const ordered = lists
    .map((list, mountOrder) => {
      const hits = list.corrections ? list.hits.filter((h) => list.corrections!.get(h.chunk.id)?.relevant) : list.hits;
      return { list, hits, kind: list.corrections ? 0 : 1, mountOrder, best: best(hits) };
    })
    .sort((a, b) => a.kind - b.kind || b.list.priority - a.list.priority || b.best - a.best || a.mountOrder - b.mountOrder);
  const seen = new Set<string>();
  const fused: SearchHit[] = [];
  for (const { hits } of ordered) {
    for (const hit of hits) {
      if (seen.has(hit.chunk.id)) continue;
      seen.add(hit.chunk.id);
      fused.push(hit);
    }
  }
  return fused;
}
