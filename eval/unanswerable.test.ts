import { describe, expect, it } from "vitest";
import { evidenceDocuments, inHoldout, MAX_EVIDENCE_DOCUMENTS, selectSplit } from "./unanswerable.ts";

const doc = (id: string, text: string) => ({ id, title: "", text });

describe("evidenceDocuments", () => {
  it("takes the judged documents and every document holding a gold answer, width and spacing folded", () => {
    const corpus = [doc("d1", "灯塔建于1871年。"), doc("d2", "另一座灯塔 建于 １８７１ 年"), doc("d3", "无关的段落")];
    const { evidence, skipped } = evidenceDocuments([{ id: "q1", text: "灯塔建于哪一年？" }], new Map([["q1", new Map([["d3", 1]])]]), new Map([["q1", ["1871年"]]]), corpus);
    expect(skipped).toEqual([]);
    expect(evidence.get("q1")!.sort()).toEqual(["d1", "d2", "d3"]);
  });

  it("skips a question whose answer is in more documents than the limit", () => {
    const corpus = Array.from({ length: MAX_EVIDENCE_DOCUMENTS + 1 }, (_, i) => doc(`d${i}`, "the answer is 42"));
    const { evidence, skipped } = evidenceDocuments([{ id: "q", text: "what is it?" }], new Map(), new Map([["q", ["42"]]]), corpus);
    expect(skipped).toEqual(["q"]);
    expect(evidence.size).toBe(0);
  });
});

describe("the held-out fifth", () => {
  it("is about a fifth, fixed per id, and the splits partition the questions", () => {
    const queries = Array.from({ length: 2000 }, (_, i) => ({ id: `q${i}` }));
    const holdout = selectSplit(queries, "holdout");
    const dev = selectSplit(queries, "dev");
    expect(holdout.length / queries.length).toBeGreaterThan(0.17);
    expect(holdout.length / queries.length).toBeLessThan(0.23);
    expect(holdout.length + dev.length).toBe(queries.length);
    expect(holdout.every((q) => inHoldout(q.id) && !dev.includes(q))).toBe(true);
    expect(selectSplit(queries, "all")).toHaveLength(2000);
  });
});
