import { describe, expect, it } from "vitest";
import { segmentForIndex, segmentQuery } from "./text-segmenter.ts";

function terms(text: string): string[] {
  return segmentForIndex(text).split(" ");
}

describe("segmentForIndex", () => {
  it("splits Chinese into words and their sub-words, so a two-character word matches inside a longer one", () => {
    const indexed = terms("最高人民检察院依法对刑事诉讼实行法律监督。");
    for (const word of ["检察", "检察院", "诉讼", "刑事", "监督"]) expect(indexed).toContain(word);
    for (const word of segmentQuery("检察")) expect(indexed).toContain(word);
    for (const word of segmentQuery("诉讼")) expect(indexed).toContain(word);
    expect(segmentQuery("民事诉讼")).toEqual(expect.arrayContaining(["民事", "诉讼"]));
  });

  it("lower-cases Latin words and drops punctuation", () => {
    expect(segmentForIndex("Hello, World! (Quarry) — RAG.")).toBe("hello world quarry rag");
  });

  it("separates Latin and Chinese written together and keeps numbers", () => {
    expect(terms("GDP增长2024年")).toEqual(expect.arrayContaining(["gdp", "增长", "2024", "年"]));
    expect(terms("GDP增长2024年")).not.toContain("gdp增长2024年");
  });

  it("folds full-width letters and digits", () => {
    expect(segmentForIndex("ＡＢＣ１２３")).toBe("abc123");
  });

  it("keeps accented letters and katakana words whole", () => {
    expect(segmentForIndex("Café naïve")).toBe("café naïve");
    expect(terms("コンピューターを使う")).toContain("コンピューター");
  });

  it("produces nothing from punctuation only", () => {
    expect(segmentForIndex("…!? ，。、")).toBe("");
  });
});

describe("segmentQuery", () => {
  it("returns distinct terms in order of first appearance", () => {
    expect(segmentQuery("Fox fox FOX dog")).toEqual(["fox", "dog"]);
  });

  it("turns query operators and quotes into plain words", () => {
    expect(segmentQuery('"fox" AND (dog* OR -cat) ^ title:x')).toEqual(["fox", "and", "dog", "or", "cat", "title", "x"]);
  });
});
