// Follows one chunk through the searches a rerun recorded: its rank and score in each raw list
// (BM25, vector) and in the search's own ranking. A chunk among the hits explains itself (every hit
// carries its rank in each list); one that is not is looked for by the same search, deeper — first
// at the search's own depth with more hits returned (its rank at the real settings), then with each
// list as deep as the deep window — and, beyond that, by searching its document alone, which scores
// the chunk itself, so a person sees "beyond rank 500 in vector (its cosine 0.21; the 32nd fetched
// scores 0.46)".
import type { SearchHit, SearchQuery } from "../../../lib/domain.ts";
import type { ListName, ListPosition, SearchTrace } from "./debug-verdict.ts";
import type { RecordedSearch } from "./retrieval-rerun.ts";

/** The index's most hits per search. */
const MAX_HITS = 1000;

export interface TracedChunk {
  chunkId: string;
  documentId: string;
  knowledgeBaseId: string;
}

/** How many candidates each list of a hybrid search fuses (services/index/search/search-query.ts hybridCandidates). */
export function hybridDepth(query: SearchQuery): number {
  return query.candidates ?? Math.max(query.topK * 4, 50);
}

export async function traceSearch(
  recorded: RecordedSearch,
  chunk: TracedChunk,
  options: { deepWindow: number; widenedForRerank: boolean; search: (query: SearchQuery) => Promise<SearchHit[]> },
): Promise<SearchTrace> {
  const { query } = recorded;
  const base = { knowledgeBaseId: query.knowledgeBaseIds.length === 1 ? query.knowledgeBaseIds[0] : "", query: query.text };
  const trace: SearchTrace = { mode: query.mode, topK: query.topK, minScore: query.minScore, widenedForRerank: options.widenedForRerank, positions: [], rankAtSettings: 0 };
  const at = (hits: SearchHit[]) => hits.findIndex((h) => h.chunk.id === chunk.chunkId);
  const deepWindow = Math.min(options.deepWindow, MAX_HITS);

  if (query.mode !== "hybrid") {
    const list: ListName = query.mode;
    const found = at(recorded.hits);
    if (found >= 0) {
      trace.rankAtSettings = found + 1;
      trace.scoreAtSettings = recorded.hits[found].score;
      trace.positions.push({ ...base, list, window: query.topK, rank: found + 1, score: recorded.hits[found].score, inWindow: true, source: "candidates", note: "" });
      return trace;
    }
    const deep = await options.search({ ...query, topK: Math.max(deepWindow, query.topK), minScore: 0 });
    const lastScore = deep[query.topK - 1]?.score;
    const deeper = at(deep);
    if (deeper >= 0) {
      trace.rankAtSettings = deeper + 1;
      trace.scoreAtSettings = deep[deeper].score;
      trace.positions.push({ ...base, list, window: query.topK, rank: deeper + 1, score: deep[deeper].score, inWindow: deeper < query.topK, source: "deep-search", windowLastScore: lastScore, note: "" });
      return trace;
    }
    trace.positions.push(await direct(list, query, chunk, options.search, { ...base, window: query.topK, windowLastScore: lastScore, beyond: deepWindow }));
    return trace;
  }

  const depth = hybridDepth(query);
  const found = at(recorded.hits);
  // Its rank in the fused ranking at the search's own settings: every hit of both lists' windows is returned.
  // The depth is pinned: left to the index, it would grow with the larger top-k.
  const atSettings = found >= 0 ? recorded.hits : await options.search({ ...query, topK: Math.min(2 * depth, MAX_HITS), candidates: depth, minScore: 0 });
  const fused = at(atSettings);
  if (fused >= 0) {
    trace.rankAtSettings = fused + 1;
    trace.scoreAtSettings = atSettings[fused].score;
  }
  trace.positions.push({
    ...base,
    list: "fused",
    window: query.topK,
    rank: fused + 1,
    ...(fused >= 0 ? { score: atSettings[fused].score } : {}),
    inWindow: found >= 0,
    source: found >= 0 ? "candidates" : fused >= 0 ? "deep-search" : "absent",
    windowLastScore: atSettings[query.topK - 1]?.score,
    note: fused >= 0 ? "" : `in neither list's ${depth} candidates`,
  });
  const explained = fused >= 0 ? atSettings[fused].explain : undefined;
  let deep: SearchHit[] | undefined;
  for (const list of ["bm25", "vector"] as const) {
    const rank = list === "bm25" ? explained?.bm25Rank : explained?.vectorRank;
    if (rank) {
      trace.positions.push({ ...base, list, window: depth, rank, score: list === "bm25" ? explained!.bm25Score : explained!.vectorScore, inWindow: true, source: found >= 0 ? "candidates" : "deep-search", note: "" });
      continue;
    }
    // Not within the list's window: the same search with both lists as deep as the deep window.
    deep ??= await options.search({ ...query, topK: Math.min(2 * deepWindow, MAX_HITS), candidates: Math.max(deepWindow, depth), minScore: 0 });
    const hit = deep.find((h) => h.chunk.id === chunk.chunkId);
    const deepRank = list === "bm25" ? hit?.explain.bm25Rank : hit?.explain.vectorRank;
    const lastScore = lastInList(deep, list, depth);
    if (deepRank) {
      trace.positions.push({
        ...base,
        list,
        window: depth,
        rank: deepRank,
        score: list === "bm25" ? hit!.explain.bm25Score : hit!.explain.vectorScore,
        inWindow: deepRank <= depth,
        source: "deep-search",
        windowLastScore: lastScore,
        note: "",
      });
      continue;
    }
    trace.positions.push(await direct(list, { ...query, mode: list }, chunk, options.search, { ...base, window: depth, windowLastScore: lastScore, beyond: Math.max(deepWindow, depth) }));
  }
  return trace;
}

/** The list score of the hit at a rank of one list, from the explanations of a deep hybrid search. */
function lastInList(hits: SearchHit[], list: "bm25" | "vector", rank: number): number | undefined {
  const hit = hits.find((h) => (list === "bm25" ? h.explain.bm25Rank : h.explain.vectorRank) === rank);
  return hit && (list === "bm25" ? hit.explain.bm25Score : hit.explain.vectorScore);
}

/**
 * The chunk scored on its own: its document alone searched in the list's mode. BM25 statistics and
 * cosine do not depend on the filter, so the score is the one the full search gives it.
 */
async function direct(
  list: "bm25" | "vector",
  query: SearchQuery,
  chunk: TracedChunk,
  search: (query: SearchQuery) => Promise<SearchHit[]>,
  base: Pick<ListPosition, "knowledgeBaseId" | "query" | "window" | "windowLastScore" | "beyond">,
): Promise<ListPosition> {
  const hits = await search({ ...query, mode: list, knowledgeBaseIds: [chunk.knowledgeBaseId], documentIds: [chunk.documentId], topK: MAX_HITS, minScore: 0, candidates: undefined });
  const hit = hits.find((h) => h.chunk.id === chunk.chunkId);
  if (!hit) return { ...base, list, rank: 0, inWindow: false, source: "absent", note: list === "bm25" ? "no word of the query is in it" : "" };
  return { ...base, list, rank: 0, score: hit.score, inWindow: false, source: "direct-score", note: `beyond rank ${base.beyond}; scored on its own (its document searched alone)` };
}
