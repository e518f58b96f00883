import { describe, expect, it } from "vitest";
import type { SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { hybridDepth, traceSearch } from "./chunk-trace.ts";

// An index of 40 chunks, one per document, with a fixed BM25 order (c0 best) and score 40 − i; c39
// has no word of any query (BM25 never returns it). The search honours top-k and the document filter.
const hit = (i: number, score: number): SearchHit => ({
  chunk: { id: `c${i}`, documentId: `d${i}`, knowledgeBaseId: "kb", index: 0, text: `chunk ${i}`, tokenCount: 2, page: 0, pageEnd: 0, sectionPath: [], start: 0, end: 9 },
  fileName: `f${i}.txt`,
  score,
  explain: { bm25Rank: i + 1, bm25Score: score, vectorRank: 0, vectorScore: 0, fusedScore: score },
});
const BM25 = Array.from({ length: 39 }, (_, i) => hit(i, 40 - i));
const searches: SearchQuery[] = [];
async function search(query: SearchQuery): Promise<SearchHit[]> {
  searches.push(query);
  const pool = query.documentIds.length > 0 ? BM25.filter((h) => query.documentIds.includes(h.chunk.documentId)) : BM25;
  return pool.slice(0, query.topK);
}
const query: SearchQuery = { knowledgeBaseIds: ["kb"], text: "q", mode: "bm25", topK: 5, minScore: 0, documentIds: [] };
const recorded = { query, hits: BM25.slice(0, 5) };
const chunk = (i: number) => ({ chunkId: `c${i}`, documentId: `d${i}`, knowledgeBaseId: "kb" });

describe("traceSearch (one list)", () => {
  it("takes a fetched chunk's rank from the hits, searching nothing more", async () => {
    searches.length = 0;
    const trace = await traceSearch(recorded, chunk(2), { deepWindow: 20, widenedForRerank: false, search });
    expect(searches).toEqual([]);
    expect(trace.rankAtSettings).toBe(3);
    expect(trace.positions).toEqual([expect.objectContaining({ list: "bm25", rank: 3, window: 5, inWindow: true, source: "candidates", score: 38 })]);
  });

  it("finds a chunk below top-k by the same search, deeper, with the score of the last one fetched", async () => {
    const trace = await traceSearch(recorded, chunk(11), { deepWindow: 20, widenedForRerank: false, search });
    expect(trace.rankAtSettings).toBe(12);
    expect(trace.positions[0]).toMatchObject({ rank: 12, window: 5, inWindow: false, source: "deep-search", score: 29, windowLastScore: 36 });
  });

  it("scores a chunk beyond the deep window on its own, and says when the list does not hold it at all", async () => {
    searches.length = 0;
    const beyond = await traceSearch(recorded, chunk(30), { deepWindow: 20, widenedForRerank: false, search });
    expect(beyond.rankAtSettings).toBe(0);
    expect(beyond.positions[0]).toMatchObject({ rank: 0, source: "direct-score", score: 10, beyond: 20, windowLastScore: 36 });
    // The direct score searched the chunk's document alone.
    expect(searches.at(-1)).toMatchObject({ documentIds: ["d30"], minScore: 0 });
    const absent = await traceSearch(recorded, chunk(39), { deepWindow: 20, widenedForRerank: false, search });
    expect(absent.positions[0]).toMatchObject({ rank: 0, source: "absent", note: "no word of the query is in it" });
  });
});

describe("hybridDepth", () => {
  it("is the search's candidates, else four times top-k and at least 50, as the index fuses", () => {
    expect(hybridDepth({ ...query, mode: "hybrid", topK: 8 })).toBe(50);
    expect(hybridDepth({ ...query, mode: "hybrid", topK: 24 })).toBe(96);
    expect(hybridDepth({ ...query, mode: "hybrid", topK: 8, candidates: 20 })).toBe(20);
  });
});
