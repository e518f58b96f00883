import { describe, expect, it } from "vitest";
import type { Chunk, EmbeddedChunk } from "../../../lib/domain.ts";
import { carryEdits, describeCarriedEdits } from "./carry-edits.ts";

function chunk(index: number, text: string, extra: Partial<Chunk> = {}): Chunk {
  return { id: `c${index}-${text.slice(0, 4)}`, documentId: "doc", knowledgeBaseId: "kb", index, text, tokenCount: text.length, page: 0, pageEnd: 0, sectionPath: [], start: 0, end: 0, ...extra };
}

function embedded(index: number, text: string): EmbeddedChunk {
  return { ...chunk(index, text), vector: new Float32Array([index, 1]) };
}

describe("carryEdits", () => {
  it("lays an edit over the new chunk with its original text, even when that chunk moved", () => {
    const stored = [chunk(0, "Alpha."), chunk(1, "Bravo.", { revision: { version: 3, manual: false, originalText: "Bravo." }, text: "Bravo, corrected." })];
    const incoming = [embedded(0, "New first paragraph."), embedded(1, "Alpha."), embedded(2, "Bravo.")];
    const carried = carryEdits(stored, incoming);
    expect(carried.chunks.map((c) => c.text)).toEqual(["New first paragraph.", "Alpha.", "Bravo, corrected."]);
    const kept = carried.chunks[2];
    expect(kept).toMatchObject({ id: incoming[2].id, index: 2, revision: { version: 3, originalText: "Bravo." } });
    // The edit's text needs its own vector: the new version's was of the original text.
    expect("vector" in kept).toBe(false);
    expect("vector" in carried.chunks[0]).toBe(true);
    expect(carried).toMatchObject({ keptEdits: 1, keptDisabled: 0, keptManual: 0, dropped: [] });
  });

  it("drops and reports an edit whose original text the new version no longer has, and a disabled chunk likewise", () => {
    const stored = [
      chunk(0, "Charlie, corrected.", { revision: { version: 2, manual: false, originalText: "Charlie." } }),
      chunk(1, "Delta."),
      chunk(2, "Echo.", { disabled: true }),
    ];
    const carried = carryEdits(stored, [embedded(0, "Charlie, rewritten upstream."), embedded(1, "Delta.")]);
    expect(carried.chunks.map((c) => c.text)).toEqual(["Charlie, rewritten upstream.", "Delta."]);
    expect(carried.dropped).toEqual([
      { chunkId: stored[0].id, index: 0, kind: "edited", text: "Charlie, corrected." },
      { chunkId: stored[2].id, index: 2, kind: "disabled", text: "Echo." },
    ]);
    expect(describeCarriedEdits(carried)).toBe('dropped 2 edit(s) whose original text is not in this version: #1 (edited: "Charlie, corrected."), #3 (disabled: "Echo.")');
  });

  it("keeps a disabled chunk disabled and appends manual chunks after the new last chunk", () => {
    const stored = [
      chunk(0, "Foxtrot.", { disabled: true }),
      chunk(5, "Written by hand.", { revision: { version: 1, manual: true, originalText: "" } }),
    ];
    const carried = carryEdits(stored, [embedded(0, "Golf."), embedded(1, "Foxtrot.")]);
    expect(carried.chunks.map((c) => [c.index, c.text, c.disabled ?? false])).toEqual([
      [0, "Golf.", false],
      [1, "Foxtrot.", true],
      [2, "Written by hand.", false],
    ]);
    expect(carried.chunks[2].id).toBe(stored[1].id);
    expect(describeCarriedEdits(carried)).toBe("kept 1 disabled, 1 manual chunk(s)");
  });

  it("says nothing when the document has no edits", () => {
    const carried = carryEdits([chunk(0, "Hotel.")], [embedded(0, "Hotel.")]);
    expect(describeCarriedEdits(carried)).toBe("");
    expect(carried.chunks).toEqual([embedded(0, "Hotel.")]);
  });
});
