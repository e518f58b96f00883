import { homedir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ChunkDraft, ChunkingSettings, PageSpan, ParsedDocument, SectionSpan } from "../../lib/domain.ts";
import { InvalidInputError, TooLargeError } from "../../lib/errors.ts";
import { CHINESE_RULES_MARKDOWN, COMPANY_MARKDOWN, ENGLISH_PROSE } from "../../test/fixtures/fixture-texts.ts";
import { chunkDocument, defaultChunkingSettings, sectionRegions, validateChunkingSettings } from "./chunk-document.ts";
import { WordPieceTokenCounter } from "../../lib/tokens/wordpiece-token-counter.ts";

const modelDir = path.join(
  process.env.QUARRY_MODELS_DIR ?? path.join(homedir(), ".cache", "quarry", "models"),
  "all-MiniLM-L6-v2-int8",
);

const counter = WordPieceTokenCounter.fromModelDir(modelDir);
const limits = { maxInputTokens: 256 };
const settings = (chunkSize: number, chunkOverlap: number): ChunkingSettings => ({
  strategy: "recursive",
  chunkSize,
  chunkOverlap,
  separators: [],
});

function document(text: string, extra: Partial<ParsedDocument> = {}): ParsedDocument {
  return { text, mimeType: "text/markdown", parser: "test", pages: [], sections: [], metadata: {}, ...extra };
}

/**
 * Nested sections from Markdown headings, as a parser would report them: each heading governs the
 * text up to the next heading of the same or a higher level.
 */
function markdownSections(text: string): SectionSpan[] {
  const headings = [...text.matchAll(/^(#{1,6}) +(.+)$/gm)].map((m) => ({ start: m.index, level: m[1].length, title: m[2].trim() }));
  const trail: string[] = [];
  return headings.map((heading, i) => {
    trail.length = heading.level - 1;
    trail[heading.level - 1] = heading.title;
    const next = headings.slice(i + 1).find((h) => h.level <= heading.level);
    return { start: heading.start, end: next?.start ?? text.length, level: heading.level, path: [...trail].filter(Boolean) };
  });
}

function expectSoundDrafts(doc: ParsedDocument, drafts: ChunkDraft[], chunkSize: number) {
  drafts.forEach((draft, i) => {
    expect(draft.index).toBe(i);
    expect(doc.text.slice(draft.start, draft.end)).toBe(draft.text);
    expect(draft.text.trim()).toBe(draft.text);
    expect(draft.text).not.toBe("");
    expect(draft.tokenCount).toBe(counter.count(draft.text));
    expect(draft.tokenCount).toBeLessThanOrEqual(chunkSize);
  });
}

describe("chunkDocument", () => {
  const zh = CHINESE_RULES_MARKDOWN;
  const zhSections = markdownSections(zh);

  it("keeps chunks inside sections and gives each the path of its section", () => {
    const doc = document(zh, { sections: zhSections });
    const drafts = chunkDocument(doc, settings(120, 20), counter, limits);
    expectSoundDrafts(doc, drafts, 120);
    // Every section with text of its own (not just the heading of its first subsection) gets
    // chunks filed under it, and no chunk is filed anywhere else.
    const withOwnText = zhSections.filter((s) => {
      const firstChild = zhSections.find((c) => c.start > s.start && c.start < s.end);
      return zh.slice(s.start, firstChild?.start ?? s.end).replace(/^#+ [^\n]*\n/, "").trim() !== "";
    });
    expect(withOwnText.length).toBe(7);
    expect(new Set(drafts.map((d) => d.sectionPath.join(" / ")))).toEqual(new Set(withOwnText.map((s) => s.path.join(" / "))));
    for (const draft of drafts) {
      // The deepest section holding the chunk's last character is the one it is filed under.
      const holding = zhSections.filter((s) => s.start <= draft.end - 1 && draft.end - 1 < s.end);
      const deepest = holding.reduce((a, b) => (b.path.length > a.path.length ? b : a));
      expect(draft.sectionPath).toEqual(deepest.path);
      // No heading of a section the chunk does not belong to starts inside it.
      for (const section of zhSections) {
        if (section.start > draft.start && section.start < draft.end) {
          expect(draft.sectionPath.slice(0, section.path.length)).toEqual(section.path);
        }
      }
    }
    // Chapter 2 opens straight into its first subsection: its title rides along, not alone.
    const chapter2 = drafts.filter((d) => d.sectionPath[1]?.startsWith("第二章"));
    expect(chapter2.some((d) => d.text.startsWith("## 第二章"))).toBe(true);
    expect(drafts.filter((d) => /^#+ [^\n]*$/.test(d.text))).toEqual([]);
  });

  it("chunks across section lines when the document has no sections", () => {
    const doc = document(zh);
    const drafts = chunkDocument(doc, settings(200, 30), counter, limits);
    expectSoundDrafts(doc, drafts, 200);
    expect(drafts.every((d) => d.sectionPath.length === 0)).toBe(true);
    expect(drafts.some((d) => /\n## /.test(d.text))).toBe(true);
  });

  it("files text before the first heading under no section", () => {
    const text = "Preface text that comes first.\n\n# Intro\n\nIntro body.\n\n## Scope\n\nScope body.";
    const doc = document(text, { sections: markdownSections(text) });
    const drafts = chunkDocument(doc, settings(100, 10), counter, limits);
    expect(drafts.map((d) => [d.text, d.sectionPath])).toEqual([
      ["Preface text that comes first.", []],
      ["# Intro\n\nIntro body.", ["Intro"]],
      ["## Scope\n\nScope body.", ["Intro", "Scope"]],
    ]);
  });

  it("records the pages a chunk starts and ends on", () => {
    const text = ENGLISH_PROSE;
    const cuts = [0, 1000, 2100, text.length];
    const pages: PageSpan[] = cuts.slice(1).map((end, i) => ({ number: i + 1, start: cuts[i], end }));
    const doc = document(text, { mimeType: "application/pdf", pages });
    const drafts = chunkDocument(doc, settings(100, 15), counter, limits);
    expectSoundDrafts(doc, drafts, 100);
    const pageOf = (at: number) => pages.find((p) => p.start <= at && at < p.end)!.number;
    for (const draft of drafts) {
      expect(draft.page).toBe(pageOf(draft.start));
      expect(draft.pageEnd).toBe(pageOf(draft.end - 1));
    }
    expect(drafts.some((d) => d.pageEnd > d.page)).toBe(true);
    expect(drafts[drafts.length - 1].pageEnd).toBe(3);
  });

  it("gives page 0 when the source has no pages", () => {
    const drafts = chunkDocument(document(COMPANY_MARKDOWN), settings(100, 10), counter, limits);
    expect(drafts.length).toBeGreaterThan(1);
    expect(drafts.every((d) => d.page === 0 && d.pageEnd === 0)).toBe(true);
  });

  it("drops whitespace and returns nothing for a blank document", () => {
    expect(chunkDocument(document(" \n\n \t\n"), settings(100, 10), counter, limits)).toEqual([]);
  });

  it("validates the settings before chunking", () => {
    expect(() => chunkDocument(document("text"), settings(300, 10), counter, limits)).toThrow(InvalidInputError);
  });
});

describe("sectionRegions", () => {
  it("cuts nested and flat sections into consecutive regions", () => {
    const sections: SectionSpan[] = [
      { start: 10, end: 100, level: 1, path: ["A"] },
      { start: 40, end: 70, level: 2, path: ["A", "B"] },
      { start: 120, end: 150, level: 1, path: ["C"] },
    ];
    expect(sectionRegions(160, sections)).toEqual([
      { start: 0, end: 10, path: [] },
      { start: 10, end: 40, path: ["A"] },
      { start: 40, end: 70, path: ["A", "B"] },
      { start: 70, end: 100, path: ["A"] },
      { start: 100, end: 120, path: [] },
      { start: 120, end: 150, path: ["C"] },
      { start: 150, end: 160, path: [] },
    ]);
  });
});

describe("validateChunkingSettings", () => {
  it("accepts the defaults for MiniLM and for a small model", () => {
    const minilm = defaultChunkingSettings(256);
    expect(() => validateChunkingSettings(minilm, 256)).not.toThrow();
    expect(minilm.chunkSize).toBeLessThanOrEqual(254);
    expect(minilm.chunkOverlap).toBeGreaterThan(0);
    expect(minilm.chunkOverlap).toBeLessThan(minilm.chunkSize);
    const small = defaultChunkingSettings(64);
    expect(() => validateChunkingSettings(small, 64)).not.toThrow();
    expect(small.chunkSize).toBe(62);
  });

  it.each([
    ["a size above the model limit", { chunkSize: 300 }, /300.*254.*256/],
    ["the largest size plus one", { chunkSize: 255 }, /255.*254/],
    ["a tiny size", { chunkSize: 8 }, /16/],
    ["a fractional size", { chunkSize: 100.5 }, /whole number/],
    ["an overlap equal to the size", { chunkSize: 100, chunkOverlap: 100 }, /overlap 100.*100/],
    ["a negative overlap", { chunkOverlap: -5 }, /overlap/],
    ["an unknown strategy", { strategy: "semantic" }, /recursive/],
  ])("refuses %s", (_, change, message) => {
    const bad = { ...settings(200, 30), ...change } as ChunkingSettings;
    expect(() => validateChunkingSettings(bad, 256)).toThrow(InvalidInputError);
    expect(() => validateChunkingSettings(bad, 256)).toThrow(message);
  });

  it("accepts the model's exact limit", () => {
    expect(() => validateChunkingSettings(settings(254, 0), 256)).not.toThrow();
  });
});

describe("chunkDocument on hostile text", () => {
  it("hard-splits a 10 MB single word into chunks within the chunk size, none longer than the character floor allows", () => {
    const word = "x".repeat(10 * 1024 * 1024);
    const started = performance.now();
    const drafts = chunkDocument(document(word), settings(200, 30), counter, limits);
    const seconds = (performance.now() - started) / 1000;
    // WordPiece reads any word over 100 characters as one [UNK]; without the floor this was one chunk.
    expect(drafts.length).toBeGreaterThan(4000);
    expect(Math.max(...drafts.map((d) => d.text.length))).toBeLessThanOrEqual(2000);
    for (const d of drafts) expect(d.tokenCount).toBeLessThanOrEqual(200);
    expect(drafts[drafts.length - 1].end).toBe(word.length);
    expect(seconds).toBeLessThan(60);
  }, 120_000);

  it("keeps real text's chunks as the tokenizer counts them", () => {
    for (const d of chunkDocument(document(ENGLISH_PROSE), settings(100, 10), counter, limits)) {
      expect(d.tokenCount).toBe(counter.count(d.text));
    }
  });

  it("fails a document over the chunk limit with TooLargeError naming the limit and its variable", () => {
    const text = "One sentence of plain text about the quarry. ".repeat(2_000);
    const call = () => chunkDocument(document(text), settings(50, 0), counter, { ...limits, maxChunks: 100 });
    expect(call).toThrow(TooLargeError);
    expect(call).toThrow(/more than 100 chunks, the limit per document \(QUARRY_MAX_DOCUMENT_CHUNKS\)/);
    expect(chunkDocument(document(text), settings(50, 0), counter, { ...limits, maxChunks: 10_000 }).length).toBeGreaterThan(100);
  });
});
