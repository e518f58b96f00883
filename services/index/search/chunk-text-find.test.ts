import { describe, expect, it } from "vitest";
import { findInPages, normaliseForFind } from "./chunk-text-find.ts";
import type { ScannedChunk } from "../../../lib/domain.ts";

const scanned = (id: string, text: string): ScannedChunk => ({
  chunk: { id, documentId: "d", knowledgeBaseId: "kb", index: 0, text, start: 0, end: text.length, page: 0, pageEnd: 0, sectionPath: [], tokenCount: 1 } as ScannedChunk["chunk"],
  fileName: "f.md",
  enabled: true,
});
const find = (text: string, chunks: ScannedChunk[]) => findInPages([chunks], { knowledgeBaseIds: ["kb"], text, limit: 10, documentIds: [], maxScan: 100 });

describe("finding a text copied from an answer", () => {
  it("matches after the answer's normalisation: inline Markdown, list bullets, whitespace, width and case", async () => {
    const chunks = [
      scanned("c1", "Rules:\n- A service imports only `lib/`, `gen/` and **its own** folder."),
      scanned("c2", "ＱＵＡＲＲＹ　的 端口 是 ８０８０"),
      scanned("c3", "Nothing to see here."),
    ];
    // As the extractive answer shows the sentence: bullet, ticks and bold gone.
    const found = await find("A service imports only lib/, gen/ and its own folder.", chunks);
    expect(found.chunks.map((c) => [c.chunk.id, c.exact])).toEqual([["c1", false]]);
    expect((await find("quarry的端口是8080", chunks)).chunks.map((c) => c.chunk.id)).toEqual(["c2"]);
    expect((await find("`lib/`", chunks)).chunks.map((c) => [c.chunk.id, c.exact])).toEqual([["c1", true]]);
    expect((await find("imports only lib", chunks)).matched).toBe(1);
    expect((await find("see there", chunks)).matched).toBe(0);
  });

  it("normalises the two sides the same way", () => {
    expect(normaliseForFind("* **Bold** `code`\n  next")).toBe(normaliseForFind("Bold code next"));
  });
});
