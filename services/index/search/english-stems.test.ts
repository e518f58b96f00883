import { describe, expect, it } from "vitest";
import { segmentForIndex } from "./text-segmenter.ts";
import { stemSegmented, stemTerm } from "./english-stems.ts";

describe("English stems for a backend that cannot stem", () => {
  it("gives other forms of a word one stem, as Lucene's porter_stem does", () => {
    expect(["running", "runs", "run"].map(stemTerm)).toEqual(["run", "run", "run"]);
    expect(["citations", "citation"].map(stemTerm)).toEqual(["citat", "citat"]);
    // Porter's own examples (step 2 and 3 suffixes).
    expect(["relational", "generalizations", "hopefulness"].map(stemTerm)).toEqual(["relat", "gener", "hope"]);
  });

  it("leaves Han, kana and numbers as the segmenter made them", () => {
    const segmented = segmentForIndex("最高人民检察院 カタカナ 2024 Flooding");
    const stemmed = stemSegmented(segmented).split(" ");
    expect(stemmed.slice(0, -1)).toEqual(segmented.split(" ").slice(0, -1));
    expect(stemmed.at(-1)).toBe("flood");
  });
});
