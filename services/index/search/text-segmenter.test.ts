import { Jieba } from "@node-rs/jieba";
import { dict } from "@node-rs/jieba/dict.js";
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

  it("adds each Han run's character unigrams and bigrams after jieba's words", () => {
    const jiebaWords = Jieba.withDict(dict).cutForSearch("脑梗塞", true);
    expect(terms("脑梗塞")).toEqual([...jiebaWords, "脑", "梗", "塞", "脑梗", "梗塞"]);
    // Grams never cross a run boundary: "塞g" is no term, and the Latin word stays whole.
    expect(terms("脑梗塞GDP")).toEqual([...jiebaWords, "脑", "梗", "塞", "脑梗", "梗塞", "gdp"]);
  });

  it("matches a query that jieba segments differently from the text through their shared bigram", () => {
    const jieba = Jieba.withDict(dict);
    const text = "脑梗塞的症状有哪些";
    // The premise: jieba alone keeps "脑梗塞" whole in the text, so the colloquial "脑梗" never meets it.
    expect(jieba.cutForSearch(text, true)).not.toContain("脑梗");
    expect(jieba.cutForSearch("脑梗", true)).toEqual(["脑梗"]);
    expect(terms(text)).toContain("脑梗");
    expect(segmentQuery("脑梗")).toContain("脑梗");
  });

  it("keeps a character outside the BMP whole in its unigram and bigram", () => {
    // 𠀀 (U+20000) is one Han character written as two UTF-16 code units.
    expect(terms("𠀀人")).toEqual(expect.arrayContaining(["𠀀", "人", "𠀀人"]));
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

  it("segments a Chinese query the same way as indexed text, without repeating a term", () => {
    expect(segmentQuery("脑梗塞")).toEqual([...new Set(terms("脑梗塞"))]);
  });

  it("turns query operators and quotes into plain words", () => {
    expect(segmentQuery('"fox" AND (dog* OR -cat) ^ title:x')).toEqual(["fox", "and", "dog", "or", "cat", "title", "x"]);
  });
});
