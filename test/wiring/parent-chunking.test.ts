import { homedir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ChunkDraft, ChunkingSettings, ParsedDocument } from "../../lib/domain.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { WordPieceTokenCounter } from "../../lib/tokens/wordpiece-token-counter.ts";
import { COMPANY_MARKDOWN } from "../fixtures/fixture-texts.ts";
import { parseMarkdown } from "../../services/parser/index.ts";
import { chunkDocument, validateChunkingSettings, previewParents } from "../../services/chunker/index.ts";

const counter = WordPieceTokenCounter.fromModelDir(
  path.join(process.env.QUARRY_MODELS_DIR ?? path.join(homedir(), ".cache", "quarry", "models"), "all-MiniLM-L6-v2-int8"),
);
const limits = { maxInputTokens: 256 };
const base: ChunkingSettings = { strategy: "recursive", chunkSize: 48, chunkOverlap: 8, separators: [] };
const company: ParsedDocument = { ...parseMarkdown(COMPANY_MARKDOWN), mimeType: "text/markdown", parser: "builtin:markdown" };

/** Every child lies inside its parent, parents are numbered in text order, each child has one. */
function expectWellNested(doc: ParsedDocument, drafts: ChunkDraft[]): void {
  let lastParent = -1;
  for (const draft of drafts) {
    const parent = draft.parent!;
    expect(parent).toBeDefined();
    expect(draft.start).toBeGreaterThanOrEqual(parent.start);
    expect(draft.end).toBeLessThanOrEqual(parent.end);
    expect(doc.text.slice(draft.start, draft.end)).toBe(draft.text);
    expect(parent.index === lastParent || parent.index === lastParent + 1).toBe(true);
    lastParent = parent.index;
  }
  // Each parent names exactly its children, the run of indexes the answer reads it from.
  for (const draft of drafts) {
    const siblings = drafts.filter((d) => d.parent!.index === draft.parent!.index).map((d) => d.index);
    expect([draft.parent!.firstChunkIndex, draft.parent!.chunkCount]).toEqual([siblings[0], siblings.length]);
  }
}

describe("two-level chunking", () => {
  it("without a parent mode chunks exactly as before, with no parents", () => {
    const plain = chunkDocument(company, base, counter, limits);
    const none = chunkDocument(company, { ...base, parent: "none" }, counter, limits);
    expect(none).toEqual(plain);
    expect(plain.every((d) => d.parent === undefined)).toBe(true);
  });

  it("section: a child's parent is its whole section, and the children are the chunks of section mode", () => {
    const plain = chunkDocument(company, base, counter, limits);
    const drafts = chunkDocument(company, { ...base, parent: "section" }, counter, limits);
    expectWellNested(company, drafts);
    // The same children: the sections fit the parent budget, so nothing is cut differently.
    expect(drafts.map(({ parent: _, ...rest }) => rest)).toEqual(plain);
    const parents = new Map(drafts.map((d) => [d.parent!.index, d.parent!]));
    expect([...parents.values()].map((p) => p.sectionPath)).toEqual([["Tallis Instruments"], ["Tallis Instruments", "1890s–1930s"], ["Tallis Instruments", "1940s–1970s"]]);
    const history = parents.get(1)!;
    expect(company.text.slice(history.start, history.end)).toMatch(/^## 1890s–1930s\n\nThe first Tallis workshop[\s\S]*thirty years\.$/);
    expect(history.tokenCount).toBe(counter.count(company.text.slice(history.start, history.end)));
  });

  it("document: one parent spans the whole document when it fits, while children still keep to their sections", () => {
    const drafts = chunkDocument(company, { ...base, parent: "document" }, counter, limits);
    expectWellNested(company, drafts);
    const parents = new Set(drafts.map((d) => JSON.stringify(d.parent)));
    expect(parents.size).toBe(1);
    const parent = drafts[0].parent!;
    expect(company.text.slice(parent.start, parent.end).trim()).toBe(company.text.trim());
    expect(parent.sectionPath).toEqual(["Tallis Instruments"]);
    expect(new Set(drafts.map((d) => d.sectionPath.join(" > ")))).toEqual(
      new Set(["Tallis Instruments", "Tallis Instruments > 1890s–1930s", "Tallis Instruments > 1940s–1970s"]),
    );
  });

  it("document: a document above the parent budget falls back to sections, cut to the budget where a section is longer", () => {
    const parentMaxTokens = 96;
    const drafts = chunkDocument(company, { ...base, parent: "document", parentMaxTokens }, counter, limits);
    expectWellNested(company, drafts);
    const parents = [...new Map(drafts.map((d) => [d.parent!.index, d.parent!])).values()];
    expect(parents.length).toBeGreaterThan(3);
    for (const parent of parents) {
      expect(parent.tokenCount).toBeLessThanOrEqual(parentMaxTokens);
      expect(parent.tokenCount).toBe(counter.count(company.text.slice(parent.start, parent.end)));
    }
    // No parent crosses a section: each lies within one section's text.
    for (const parent of parents) expect(company.text.slice(parent.start, parent.end)).not.toMatch(/\n## /);
  });

  it("refuses a parent smaller than a chunk and an unknown mode, saying why", () => {
    expect(() => validateChunkingSettings({ ...base, parent: "section", parentMaxTokens: 32 }, 256)).toThrow(InvalidInputError);
    expect(() => validateChunkingSettings({ ...base, parent: "section", parentMaxTokens: 32 }, 256)).toThrow(/parent size 32 is below the chunk size 48/);
    expect(() => validateChunkingSettings({ ...base, parent: "chapter" as never }, 256)).toThrow(/unknown parent mode "chapter"/);
  });

  it("PreviewChunks groups the children under their parents, each parent once with its text", () => {
    const drafts = chunkDocument(company, { ...base, parent: "section" }, counter, limits);
    const parents = previewParents(company.text, drafts);
    expect(parents.map((p) => p.parent!.index)).toEqual([0, 1, 2]);
    expect(parents.flatMap((p) => p.chunkIndexes)).toEqual(drafts.map((d) => d.index));
    for (const p of parents) {
      expect(p.text).toBe(company.text.slice(p.parent!.startOffset, p.parent!.endOffset));
      for (const i of p.chunkIndexes) expect(p.text).toContain(drafts[i].text);
    }
    expect(previewParents(company.text, chunkDocument(company, base, counter, limits))).toEqual([]);
  });
});
