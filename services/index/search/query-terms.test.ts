import { describe, expect, it } from "vitest";
import { averageRowLength, BM25_B, BM25_K1, queryTermWeight, weightedQueryTerms } from "./query-terms.ts";
import { ENGLISH_STOP_WORDS } from "./stop-words.ts";

describe("queryTermWeight", () => {
  it("is 1 for a word said once and grows with each repetition, by less each time", () => {
    for (const questionLength of [3, 100, 1000]) {
      expect(queryTermWeight(1, questionLength, 100)).toBeCloseTo(1, 12);
      const weights = [1, 2, 3, 4, 10, 1000].map((count) => queryTermWeight(count, questionLength, 100));
      for (let i = 1; i < weights.length; i++) expect(weights[i]).toBeGreaterThan(weights[i - 1]);
      expect(weights[1] - weights[0]).toBeGreaterThan(weights[2] - weights[1]);
    }
  });

  it("saturates as BM25 saturates a chunk's term frequency, normalised by the question's length", () => {
    // A question as long as the average chunk: K = k1.
    expect(queryTermWeight(2, 100, 100)).toBeCloseTo((2 * (BM25_K1 + 1)) / (BM25_K1 + 2), 12);
    const k = BM25_K1 * (1 - BM25_B + (BM25_B * 10) / 100);
    expect(queryTermWeight(3, 10, 100)).toBeCloseTo((3 * (k + 1)) / (k + 3), 12);
    // Unknown average length (an empty index): no length normalisation.
    expect(queryTermWeight(2, 10, 0)).toBeCloseTo(queryTermWeight(2, 100, 100), 12);
  });

  it("lets a long question's repetition count more than a short one's", () => {
    expect(queryTermWeight(2, 300, 100)).toBeGreaterThan(queryTermWeight(2, 100, 100));
    expect(queryTermWeight(2, 100, 100)).toBeGreaterThan(queryTermWeight(2, 10, 100));
    expect(queryTermWeight(2, 10, 100)).toBeLessThan(1.2);
  });
});

describe("averageRowLength", () => {
  it("pools the bases searched together and is 0 for none", () => {
    expect(averageRowLength([{ rows: 2, terms: 30 }, { rows: 8, terms: 70 }])).toBe(10);
    expect(averageRowLength([{ rows: 0, terms: 0 }])).toBe(0);
    expect(averageRowLength([])).toBe(0);
  });
});

describe("weightedQueryTerms", () => {
  it("groups the question's distinct terms by how often it says them, terms said once first", () => {
    // Six terms in all: "tax" three times, "the" twice, "rich" once.
    expect(weightedQueryTerms("Tax the tax, tax the rich!", 20)).toEqual([
      { weight: queryTermWeight(1, 6, 20), terms: ["rich"] },
      { weight: queryTermWeight(2, 6, 20), terms: ["the"] },
      { weight: queryTermWeight(3, 6, 20), terms: ["tax"] },
    ]);
  });

  it("counts Chinese terms as the index counts them", () => {
    // "人" is jieba's word and also the run's unigram, so the question says it twice, as a chunk would.
    expect(weightedQueryTerms("人", 50)).toEqual([{ weight: queryTermWeight(2, 2, 50), terms: ["人"] }]);
  });

  it("has no groups for a question without searchable words", () => {
    expect(weightedQueryTerms("…!? ，。", 50)).toEqual([]);
  });
});

describe("weightedQueryTerms with a stop list", () => {
  it("keeps the question's other words only, so a chunk sharing just 'of' or 'the' would be no keyword hit", () => {
    expect(weightedQueryTerms("The history of tea in Yunnan", 0, ENGLISH_STOP_WORDS).flatMap((g) => g.terms)).toEqual(["history", "tea", "yunnan"]);
  });

  it("gives a question of stop words only no terms: the keyword list is empty", () => {
    expect(weightedQueryTerms("Is it these, or not?", 20, ENGLISH_STOP_WORDS)).toEqual([]);
  });
});
