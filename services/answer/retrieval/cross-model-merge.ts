// Knowledge bases with different embedding models cannot share one vector query: a question is
// embedded once per model and each group of bases is searched with its own vector. The groups'
// scores are not comparable (cosines of different models, fusions of different lists), so the
// lists are merged by rank alone — reciprocal rank fusion with one list per group, which for
// disjoint lists interleaves them rank by rank — and a tie at one rank goes to the higher score.
import type { SearchHit } from "../../../lib/domain.ts";

export function mergeByRank(lists: SearchHit[][], topK: number): SearchHit[] {
  const ranked = lists.flatMap((hits) => hits.map((hit, i) => ({ hit, rank: i + 1 })));
  const seen = new Set<string>();
  return ranked
    .sort((a, b) => a.rank - b.rank || b.hit.score - a.hit.score || (a.hit.chunk.id < b.hit.chunk.id ? -1 : 1))
    .filter(({ hit }) => !seen.has(hit.chunk.id) && Boolean(seen.add(hit.chunk.id)))
    .slice(0, topK)
    .map(({ hit }) => hit);
}

/** Knowledge base ids grouped by their embedding model, in first-seen order. */
export function groupByModel(modelOf: Record<string, string>, knowledgeBaseIds: string[]): { model: string; knowledgeBaseIds: string[] }[] {
  const groups = new Map<string, string[]>();
  for (const id of knowledgeBaseIds) {
    const model = modelOf[id] ?? "";
    groups.set(model, [...(groups.get(model) ?? []), id]);
  }
  return [...groups].map(([model, ids]) => ({ model, knowledgeBaseIds: ids }));
}
