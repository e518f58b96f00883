import { describe, expect, it } from "vitest";
import { documentRanking, mrrAt, ndcgAt, percentile, recallAt, summarize } from "./metrics.ts";

const judged = (ranked: string[], relevant: Record<string, number>) => ({ ranked, relevant: new Map(Object.entries(relevant)) });

describe("ndcgAt", () => {
  it("uses linear gain and a log2(rank + 1) discount, against the ideal order of all relevant documents", () => {
    // Ranking a, b, c, d with a=3 (rank 1), c=2 (rank 3), e=1 not retrieved.
    // DCG  = 3/log2(2) + 0/log2(3) + 2/log2(4) + 0/log2(5) = 3 + 0 + 1 + 0 = 4
    // IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.261860 + 0.5 = 4.761860
    // nDCG = 4 / 4.761860 = 0.840008
    const value = ndcgAt(10, judged(["a", "b", "c", "d"], { a: 3, c: 2, e: 1 }));
    expect(value).toBeCloseTo(4 / (3 + 2 / Math.log2(3) + 0.5), 10);
    expect(value).toBeCloseTo(0.840008, 5);
  });

  it("cuts both the ranking and the ideal list at k", () => {
    // k = 2, ranking x, a, b with a=1, b=1: DCG = 0 + 1/log2(3) = 0.630930;
    // IDCG@2 = 1 + 1/log2(3) = 1.630930 (b at rank 3 is past the cut); nDCG = 0.386853.
    expect(ndcgAt(2, judged(["x", "a", "b"], { a: 1, b: 1 }))).toBeCloseTo(0.386853, 5);
  });

  it("is 1 for the ideal order and 0 when nothing relevant is retrieved", () => {
    expect(ndcgAt(10, judged(["a", "c", "b"], { a: 3, b: 1, c: 2 }))).toBeCloseTo(1, 12);
    expect(ndcgAt(10, judged(["x", "y"], { a: 1 }))).toBe(0);
  });

  it("ignores judgements of 0", () => {
    // z judged 0 adds nothing to the ideal: DCG = 1/log2(3) = 0.630930, IDCG = 1, nDCG = 0.630930.
    expect(ndcgAt(10, judged(["z", "a"], { a: 1, z: 0 }))).toBeCloseTo(1 / Math.log2(3), 10);
  });
});

describe("recallAt and mrrAt", () => {
  it("recall counts relevant documents within the cut", () => {
    // 3 relevant (a, b, c); b is at rank 3, so @2 finds only a: 1/3, and @3 finds a and b: 2/3.
    const run = judged(["a", "x", "b", "y"], { a: 1, b: 2, c: 1 });
    expect(recallAt(2, run)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(3, run)).toBeCloseTo(2 / 3, 12);
  });

  it("MRR is the reciprocal rank of the first relevant hit, 0 past the cut", () => {
    // First relevant (b) at rank 3: 1/3. With k = 2 it is past the cut: 0.
    const run = judged(["x", "y", "b", "a"], { a: 1, b: 1 });
    expect(mrrAt(10, run)).toBeCloseTo(1 / 3, 12);
    expect(mrrAt(2, run)).toBe(0);
  });
});

describe("documentRanking", () => {
  it("keeps each document at its best chunk's rank and drops the query's own id", () => {
    // Chunks of d1, d2, d1 again, the query's own id q7, then d3: documents d1, d2, d3.
    expect(documentRanking("q7", ["d1", "d2", "d1", "q7", "d3"])).toEqual(["d1", "d2", "d3"]);
  });
});

describe("summarize", () => {
  it("averages over every judged query, counting a query without a run as 0", () => {
    const qrels = new Map([
      ["q1", new Map([["a", 1]])],
      ["q2", new Map([["b", 1]])],
    ]);
    // q1: a at rank 2 → nDCG = 1/log2(3) = 0.630930, MRR = 0.5, recall = 1. q2: no run → 0, 0, 0.
    const summary = summarize(qrels, new Map([["q1", ["x", "a"]]]));
    expect(summary.queries).toBe(2);
    expect(summary.ndcgAt10).toBeCloseTo(1 / Math.log2(3) / 2, 10);
    expect(summary.mrrAt10).toBeCloseTo(0.25, 12);
    expect(summary.recallAt100).toBeCloseTo(0.5, 12);
  });
});

describe("percentile", () => {
  it("takes the nearest rank", () => {
    // Sorted 1..10: p50 → rank ceil(5) = 5 → 5; p95 → rank ceil(9.5) = 10 → 10.
    const values = [7, 3, 10, 1, 5, 9, 2, 8, 4, 6];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 95)).toBe(10);
    expect(percentile([], 50)).toBeNaN();
  });
});
