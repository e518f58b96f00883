import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseCsv } from "./csv-parser.ts";

const docs = path.resolve(process.cwd(), "../shared/corpus/docs");
const readText = (name: string) => readFileSync(path.join(docs, name), "utf8");

describe("parseCsv", () => {
  it("labels every value with its column, one row per line, header first", () => {
    const { text, metadata } = parseCsv(readText("csv-comma.csv"), { tabSeparated: false });
    const lines = text.split("\n");
    expect(lines[0]).toBe("Columns: Index; Customer Id; First Name; Last Name; Company; City; Country; Phone 1; Phone 2; Email; Subscription Date; Website");
    expect(lines).toHaveLength(6);
    // The quoted field with a comma stays one value.
    expect(lines[2]).toContain("First Name: Preston; Last Name: Lozano, Dr; Company: Vega-Gentry");
    expect(metadata).toMatchObject({ delimiter: "comma", rows: "5", columns: "12" });
  });

  it("keeps multi-line Chinese cells on their row's line", () => {
    const { text, metadata } = parseCsv(readText("zh_langchain-ChatGLM_closed_issues.csv"), { tabSeparated: false });
    const lines = text.split("\n");
    expect(metadata.rows).toBe("172");
    expect(lines).toHaveLength(173);
    expect(lines[0]).toBe("Columns: column 1; title; file; url; detail; id");
    expect(lines[1]).toBe(
      "column 1: 0; title: 加油~以及一些建议; file: 2023-03-31.0002; url: https://github.com/imClumsyPanda/langchain-ChatGLM/issues/2; detail: 加油，我认为你的方向是对的。; id: 0",
    );
    expect(lines.slice(1).every((line) => line.startsWith("column 1: "))).toBe(true);
  });

  it("reads TSV and names unnamed or extra columns", () => {
    const { text } = parseCsv("name\t\nAda\tLovelace\tLondon\n", { tabSeparated: true });
    expect(text).toBe("Columns: name; column 2; column 3\nname: Ada; column 2: Lovelace; column 3: London");
  });

  it("guesses a semicolon delimiter and skips empty cells", () => {
    const { text, metadata } = parseCsv("city;country;note\nParis;France;\nLyon;;big\n", { tabSeparated: false });
    expect(metadata.delimiter).toBe("semicolon");
    expect(text.split("\n").slice(1)).toEqual(["city: Paris; country: France", "city: Lyon; note: big"]);
  });
});
