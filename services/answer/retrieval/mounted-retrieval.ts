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
//   4. A chunk found through two bases (it cannot be, today: chunks belong to one base) would keep
//      its first place.
import type { SearchHit } from "../../../lib/domain.ts";
import { retrieve, type Retrieval, type RetrievalDeps, type RetrievalSettings } from "./retrieval-stage.ts";

export interface Mount {
  knowledgeBaseId: string;
  /** Hits this base contributes; 0: the settings' topK. */
  topK: number;
  priority: number;
}

/** One base's search, as it came back. */
export interface CandidateList extends Retrieval {
  knowledgeBaseId: string;
  priority: number;
  topK: number;
}

export interface FusedRetrieval extends Retrieval {
  lists: CandidateList[];
  /** The rank each hit had in its own base's list (chunk id → rank). */
  listRank: Map<string, number>;
}

export const FUSION_RULE =
  "priority bands (higher first); within a band, bases by their best hit's score; each base's hits in its own order, grouped by base";

/** Searches each mounted base for its own top-k and fuses the lists (see the rule above). */
export async function retrieveMounted(question: string, deps: RetrievalDeps, mounts: Mount[], settings: RetrievalSettings): Promise<FusedRetrieval> {
  const lists = await Promise.all(
    mounts.map(async (mount): Promise<CandidateList> => {
      const topK = mount.topK || settings.topK;
      const run = await retrieve(question, deps, { ...settings, knowledgeBaseIds: [mount.knowledgeBaseId], topK });
      return { ...run, knowledgeBaseId: mount.knowledgeBaseId, priority: mount.priority, topK };
    }),
  );
  const hits = fuseByPriority(lists);
  const listRank = new Map<string, number>();
  for (const list of lists) list.hits.forEach((hit, i) => listRank.set(hit.chunk.id, i + 1));
  return { hits, lists, listRank };
}

export function fuseByPriority(lists: readonly Pick<CandidateList, "priority" | "hits">[]): SearchHit[] {
  const best = (hits: SearchHit[]) => hits.reduce((top, h) => Math.max(top, h.score), Number.NEGATIVE_INFINITY);
  const ordered = lists
    .map((list, mountOrder) => ({ list, mountOrder, best: best(list.hits) }))
    .sort((a, b) => b.list.priority - a.list.priority || b.best - a.best || a.mountOrder - b.mountOrder);
  const seen = new Set<string>();
  const fused: SearchHit[] = [];
  for (const { list } of ordered) {
    for (const hit of list.hits) {
      if (seen.has(hit.chunk.id)) continue;
      seen.add(hit.chunk.id);
      fused.push(hit);
    }
  }
  return fused;
}
