import { describe, expect, it } from "vitest";
import { describeMiss, judge, ordinal, type ListPosition, type SearchTrace, type TraceFacts } from "./debug-verdict.ts";

const pos = (p: Partial<ListPosition> & Pick<ListPosition, "list" | "rank" | "window" | "source">): ListPosition => ({
  knowledgeBaseId: "kb_1",
  query: "q",
  inWindow: p.rank > 0 && p.rank <= p.window,
  note: "",
  ...p,
});

function hybrid(fusedRank: number, bm25: ListPosition, vector: ListPosition, extra: Partial<SearchTrace> = {}): SearchTrace {
  return {
    mode: "hybrid",
    topK: 8,
    minScore: 0,
    widenedForRerank: false,
    rankAtSettings: fusedRank,
    scoreAtSettings: 0.03,
    positions: [pos({ list: "fused", rank: fusedRank, window: 8, source: fusedRank ? "deep-search" : "absent" }), bm25, vector],
    ...extra,
  };
}

function facts(overrides: Partial<TraceFacts> = {}): TraceFacts {
  return {
    unsearchable: "",
    searches: [],
    inSearchHits: false,
    candidateRank: 0,
    candidateCount: 8,
    reranked: false,
    retrievedRank: 0,
    topK: 8,
    contextNumber: 0,
    contextTokenBudget: 3000,
    ...overrides,
  };
}

describe("judge", () => {
  it("says a chunk in the context is there, with its number", () => {
    expect(judge(facts({ retrievedRank: 2, contextNumber: 2 }))).toEqual({ loss: "none", verdict: "in the context as [2] (rank 2 of the 8 retrieved)" });
  });

  it("blames the context for a retrieved chunk left out: a repeat, or the budget", () => {
    expect(judge(facts({ retrievedRank: 5, exclusion: { reason: "duplicate", duplicateOf: 1 } }))).toEqual({
      loss: "duplicate",
      verdict: "retrieved (rank 5) but left out of the context as a repeat of [1]",
    });
    expect(judge(facts({ retrievedRank: 7, exclusion: { reason: "over-budget" } }))).toEqual({
      loss: "context-budget",
      verdict: "retrieved (rank 7) but left out of the context: its 3,000-token budget was spent",
    });
  });

  it("blames rerank for a candidate the reranker did not keep, and top-k when nothing reranked", () => {
    expect(judge(facts({ candidateRank: 3, candidateCount: 24, reranked: true }))).toEqual({
      loss: "rerank",
      verdict: "dropped by rerank: 3rd of the 24 candidates before rerank, not in the 8 the reranker kept",
    });
    expect(judge(facts({ candidateRank: 11, candidateCount: 24, reranked: false })).loss).toBe("top-k");
  });

  it("says 'ranked 14th after fusion, top-k is 8' when the lists had it but fusion ranked it below top-k", () => {
    const search = hybrid(14, pos({ list: "bm25", rank: 12, window: 50, source: "deep-search" }), pos({ list: "vector", rank: 20, window: 50, source: "deep-search" }));
    expect(judge(facts({ searches: [search] }))).toEqual({ loss: "top-k", verdict: "not retrieved: ranked 14th after fusion, top-k is 8" });
  });

  it("blames fusion when one list had it within top-k but the fused ranking did not", () => {
    const search = hybrid(11, pos({ list: "bm25", rank: 2, window: 50, source: "deep-search" }), pos({ list: "vector", rank: 0, window: 50, source: "direct-score", score: 0.1 }));
    expect(judge(facts({ searches: [search] }))).toEqual({ loss: "fusion", verdict: "dropped by fusion: 2nd in bm25, but 11th after fusion; top-k is 8" });
  });

  it("blames min score for a chunk within top-k whose score is under it", () => {
    const search = hybrid(3, pos({ list: "bm25", rank: 3, window: 50, source: "deep-search" }), pos({ list: "vector", rank: 4, window: 50, source: "deep-search" }), {
      minScore: 0.05,
      scoreAtSettings: 0.0312,
    });
    expect(judge(facts({ searches: [search] }))).toEqual({ loss: "min-score", verdict: "dropped by min score: ranked 3rd, but its score 0.0312 is under 0.0500" });
  });

  it("says how far below each list's depth a chunk in no window was", () => {
    const search = hybrid(
      0,
      pos({ list: "bm25", rank: 37, window: 32, source: "deep-search" }),
      pos({ list: "vector", rank: 0, window: 32, source: "direct-score", score: 0.21, windowLastScore: 0.46, beyond: 500 }),
    );
    expect(judge(facts({ searches: [search] }))).toEqual({
      loss: "not-retrieved",
      verdict: "not retrieved: rank 37 in bm25, below the 32 fetched; beyond rank 500 in vector (its score 0.210; the 32nd fetched scores 0.460)",
    });
  });

  it("reads a keyword-only search's rank as a top-k cut, and a chunk without the query's words as absent", () => {
    const ranked: SearchTrace = { mode: "bm25", topK: 8, minScore: 0, widenedForRerank: false, rankAtSettings: 9, positions: [pos({ list: "bm25", rank: 9, window: 8, source: "deep-search" })] };
    expect(judge(facts({ searches: [ranked] })).verdict).toBe("not retrieved: ranked 9th in bm25, top-k is 8");
    const absent: SearchTrace = { ...ranked, rankAtSettings: 0, positions: [pos({ list: "bm25", rank: 0, window: 8, source: "absent" })] };
    expect(judge(facts({ searches: [absent] }))).toEqual({ loss: "not-retrieved", verdict: "not retrieved: not in bm25 at all (no word of the query is in it)" });
  });

  it("names the rerank widening in a top-k verdict", () => {
    const search = hybrid(30, pos({ list: "bm25", rank: 28, window: 96, source: "deep-search" }), pos({ list: "vector", rank: 40, window: 96, source: "deep-search" }), {
      topK: 24,
      widenedForRerank: true,
    });
    expect(judge(facts({ searches: [search] })).verdict).toBe("not retrieved: ranked 30th after fusion, 24 candidates are fetched for rerank");
  });

  it("puts an unsearchable chunk before everything else", () => {
    expect(judge(facts({ unsearchable: "its document a.pdf is disabled", contextNumber: 1 }))).toEqual({
      loss: "not-searchable",
      verdict: "not searchable: its document a.pdf is disabled",
    });
  });

  it("blames the query variants' fusion for a hit of a search that is not among the pooled candidates", () => {
    expect(judge(facts({ inSearchHits: true, candidateCount: 8 })).loss).toBe("fusion");
  });
});

describe("describeMiss and ordinal", () => {
  it("describes a chunk within a list's window", () => {
    expect(describeMiss(pos({ list: "vector", rank: 4, window: 50, source: "candidates" }))).toBe("rank 4 in vector, within the 50 fetched");
  });

  it("writes English ordinals", () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(ordinal)).toEqual(["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th"]);
  });
});
