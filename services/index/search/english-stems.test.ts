import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeWithEngine } from "../../../test/support/engines.ts";
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

// The claim english-stems.ts rests on: its stems are OpenSearch's porter_stem stems, checked on every
// distinct term of this repository's own prose (a few thousand real English words, and some Chinese).
describeWithEngine("OPENSEARCH_URL", "English stems against OpenSearch's porter_stem", (url) => {
  it("stems every term of the docs as OpenSearch's analyzer does", async () => {
    const prose = ["README.md", "docs/ARCHITECTURE.md", "docs/architecture/ingestion.md", "docs/architecture/models-and-documents.md", "docs/architecture/retrieval-and-answers.md", "docs/EVALUATION.md", "docs/history/2026-11-evaluation-notebook.md"].map((file) => readFileSync(new URL(`../../../${file}`, import.meta.url), "utf8")).join("\n");
    const terms = [...new Set(segmentForIndex(prose).split(" ").filter(Boolean))];
    expect(terms.length).toBeGreaterThan(3000);
    const response = await fetch(`${url}/_analyze`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tokenizer: "whitespace", filter: ["lowercase", "porter_stem"], text: terms }),
    });
    expect(response.status).toBe(200);
    const { tokens } = (await response.json()) as { tokens: { token: string }[] };
    expect(tokens).toHaveLength(terms.length);
    // Lucene keeps a stem of length zero before "eed" ("eed" itself); the package cuts it: the one known difference.
    const differing = terms.filter((term, i) => stemTerm(term) !== tokens[i].token && term !== "eed");
    expect(differing).toEqual([]);
  });
});
