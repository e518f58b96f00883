import { describe, expect, it } from "vitest";
import type { ChunkDraft } from "../../lib/domain.ts";
import { chunkId, toChunks } from "./chunk-id.ts";

const draft = (index: number, text: string): ChunkDraft => ({
  index,
  text,
  tokenCount: text.split(" ").length,
  page: 1,
  pageEnd: 1,
  sectionPath: ["Intro"],
  start: index * 100,
  end: index * 100 + text.length,
});

describe("chunkId", () => {
  it("is 32 hex characters and the same for the same input", () => {
    const id = chunkId("doc-1", 3, "Some chunk text.");
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(chunkId("doc-1", 3, "Some chunk text.")).toBe(id);
  });

  it("changes with the document, the position and the text", () => {
    const id = chunkId("doc-1", 3, "Some chunk text.");
    expect(chunkId("doc-2", 3, "Some chunk text.")).not.toBe(id);
    expect(chunkId("doc-1", 4, "Some chunk text.")).not.toBe(id);
    expect(chunkId("doc-1", 3, "Some chunk text!")).not.toBe(id);
  });

  it("keeps its parts apart, so shifting characters between them changes the id", () => {
    expect(chunkId("doc-1", 12, "3 text")).not.toBe(chunkId("doc-1", 1, "23 text"));
    expect(chunkId("doc-1", 1, "text")).not.toBe(chunkId("doc-", 11, "text"));
  });
});

describe("toChunks", () => {
  it("adds ids and owners to every draft, keeping the draft's fields", () => {
    const drafts = [draft(0, "alpha beta"), draft(1, "gamma delta"), draft(2, "alpha beta")];
    const chunks = toChunks(drafts, "doc-9", "kb-1");
    expect(chunks).toHaveLength(3);
    chunks.forEach((chunk, i) => {
      expect(chunk).toMatchObject({ ...drafts[i], documentId: "doc-9", knowledgeBaseId: "kb-1" });
      expect(chunk.id).toBe(chunkId("doc-9", i, drafts[i].text));
    });
    // Equal text at different positions still gets distinct ids.
    expect(new Set(chunks.map((c) => c.id)).size).toBe(3);
    // The chunk owns its section path: changing it leaves the draft alone.
    chunks[0].sectionPath.push("changed");
    expect(drafts[0].sectionPath).toEqual(["Intro"]);
  });
});
