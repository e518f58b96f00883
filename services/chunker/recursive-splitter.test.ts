import { homedir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../lib/errors.ts";
import { CHINESE_RULES_MARKDOWN, ENGLISH_PROSE } from "../../test/fixtures/fixture-texts.ts";
import { RecursiveSplitter, type SplitChunk } from "./recursive-splitter.ts";
import type { TokenCounter } from "../../lib/tokens/tokenizer.ts";
import { WordPieceTokenCounter } from "../../lib/tokens/wordpiece-token-counter.ts";

const modelDir = path.join(
  process.env.QUARRY_MODELS_DIR ?? path.join(homedir(), ".cache", "quarry", "models"),
  "all-MiniLM-L6-v2-int8",
);

const counter = WordPieceTokenCounter.fromModelDir(modelDir);
const chinese = CHINESE_RULES_MARKDOWN;
const english = ENGLISH_PROSE;

/** The splitter's contract, checked on every chunk: exact offsets, size, order and no lost text. */
function expectSoundChunks(source: string, chunks: SplitChunk[], chunkSize: number, tokens: TokenCounter = counter, from = 0) {
  let covered = from;
  let previous: SplitChunk | undefined;
  for (const chunk of chunks) {
    expect(source.slice(chunk.start, chunk.end)).toBe(chunk.text);
    expect(chunk.text).toBe(chunk.text.trim());
    expect(chunk.text.length).toBeGreaterThan(0);
    expect(chunk.tokenCount).toBe(tokens.count(chunk.text));
    expect(chunk.tokenCount).toBeLessThanOrEqual(chunkSize);
    if (previous) {
      expect(chunk.start).toBeGreaterThan(previous.start);
      expect(chunk.end).toBeGreaterThan(previous.end);
    }
    // Anything between what earlier chunks covered and this chunk must be whitespace.
    if (chunk.start > covered) expect(source.slice(covered, chunk.start).trim()).toBe("");
    covered = Math.max(covered, chunk.end);
    previous = chunk;
  }
  expect(source.slice(covered).trim()).toBe("");
}

describe("RecursiveSplitter", () => {
  it("splits Chinese with no spaces at sentence and clause ends, keeping the punctuation", () => {
    // A few articles run together with no line breaks: only sentence and clause rungs can cut.
    const text = chinese.split("\n").filter((line) => line.startsWith("第")).slice(0, 12).join("").replace(/\s/g, "");
    expect(text).not.toMatch(/\s/);
    const chunks = new RecursiveSplitter(counter, { chunkSize: 64, chunkOverlap: 0 }).split(text);
    expect(chunks.length).toBeGreaterThan(3);
    expectSoundChunks(text, chunks, 64);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.text).toMatch(/[。！？；，、]$/);
    // With sentences under the limit, at least some cuts fall at full stops, not just commas.
    expect(chunks.some((c) => c.text.endsWith("。"))).toBe(true);
  });

  it("keeps a text shorter than one chunk whole, trimmed", () => {
    const text = "\n  It was in July, 1805.\n\nAnna Pavlovna had had a cough.  \n";
    const chunks = new RecursiveSplitter(counter, { chunkSize: 100, chunkOverlap: 10 }).split(text);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].text).toBe(text.trim());
    expectSoundChunks(text, chunks, 100);
  });

  it("returns no chunks for whitespace", () => {
    expect(new RecursiveSplitter(counter, { chunkSize: 50, chunkOverlap: 5 }).split(" \n\n\t ")).toEqual([]);
  });

  it("splits a single 50,000-character line of English", () => {
    let line = "";
    while (line.length < 50_000) line += english.replace(/\s+/g, " ") + " ";
    line = line.slice(0, 50_000);
    const chunks = new RecursiveSplitter(counter, { chunkSize: 200, chunkOverlap: 30 }).split(line);
    expectSoundChunks(line, chunks, 200);
    // Chunks are filled, not cut into slivers: the average is well over half the limit.
    const average = chunks.reduce((sum, c) => sum + c.tokenCount, 0) / chunks.length;
    expect(average).toBeGreaterThan(120);
  });

  it("splits a single 50,000-character line of Chinese without punctuation at characters", () => {
    const bare = chinese.replace(/[\s\p{P}]/gu, "");
    let line = "";
    while (line.length < 50_000) line += bare;
    line = line.slice(0, 50_000);
    const chunks = new RecursiveSplitter(counter, { chunkSize: 200, chunkOverlap: 30 }).split(line);
    expectSoundChunks(line, chunks, 200);
    expect(chunks.length).toBeGreaterThan(250);
  });

  it("carries at most chunkOverlap tokens from the end of one chunk into the next", () => {
    const text = english.slice(0, 6000);
    const overlap = 20;
    const chunks = new RecursiveSplitter(counter, { chunkSize: 80, chunkOverlap: overlap }).split(text);
    expectSoundChunks(text, chunks, 80);
    expect(chunks.length).toBeGreaterThan(5);
    for (let i = 1; i < chunks.length; i++) {
      const [previous, next] = [chunks[i - 1], chunks[i]];
      // The next chunk starts inside the previous one, so it begins with the previous chunk's end.
      expect(next.start).toBeLessThan(previous.end);
      expect(previous.text.endsWith(text.slice(next.start, previous.end))).toBe(true);
      const shared = counter.count(text.slice(next.start, previous.end));
      expect(shared).toBeGreaterThan(0);
      expect(shared).toBeLessThanOrEqual(overlap);
    }
  });

  it("does not overlap when chunkOverlap is 0", () => {
    const text = english.slice(0, 4000);
    const chunks = new RecursiveSplitter(counter, { chunkSize: 60, chunkOverlap: 0 }).split(text);
    expectSoundChunks(text, chunks, 60);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i].start).toBeGreaterThanOrEqual(chunks[i - 1].end);
  });

  it("uses custom separators instead of the default ladder", () => {
    const records = Array.from({ length: 40 }, (_, i) => `record ${i}. holds some words, and more words`);
    const text = records.join(" | ");
    const chunks = new RecursiveSplitter(counter, { chunkSize: 40, chunkOverlap: 0, separators: [" | "] }).split(text);
    expectSoundChunks(text, chunks, 40);
    expect(chunks.length).toBeGreaterThan(1);
    // Every cut falls after a record separator, never at the sentence or clause ends the default ladder would use.
    for (const chunk of chunks.slice(0, -1)) expect(chunk.text).toMatch(/ \|$/);
    for (const chunk of chunks.slice(1)) expect(chunk.text).toMatch(/^record \d+\./);
  });

  it("keeps every chunk within the limit even when counts do not add up across cuts", () => {
    // A counter where a chunk costs more than its pieces: "xy" pairs cost 3 extra tokens, so any
    // merge that rejoins a cut x|y is over the estimate and must be caught by the real count.
    const lumpy: TokenCounter = { count: (t) => t.replace(/\s/g, "").length + 3 * (t.match(/xy/g)?.length ?? 0) };
    const text = "xy".repeat(300);
    const chunks = new RecursiveSplitter(lumpy, { chunkSize: 30, chunkOverlap: 6 }).split(text);
    expectSoundChunks(text, chunks, 30, lumpy);
    expect(chunks.length).toBeGreaterThan(10);
  });

  it("refuses an overlap as large as the chunk", () => {
    expect(() => new RecursiveSplitter(counter, { chunkSize: 50, chunkOverlap: 50 })).toThrow(InvalidInputError);
    expect(() => new RecursiveSplitter(counter, { chunkSize: 50, chunkOverlap: 80 })).toThrow(/overlap 80.*chunk size 50/);
    expect(() => new RecursiveSplitter(counter, { chunkSize: 50, chunkOverlap: -1 })).toThrow(InvalidInputError);
  });

  it("refuses a chunk size above the model's limit, naming both numbers", () => {
    const make = () => new RecursiveSplitter(counter, { chunkSize: 300, chunkOverlap: 0, maxChunkTokens: 254 });
    expect(make).toThrow(InvalidInputError);
    expect(make).toThrow(/300.*254/);
  });

  it("splits within a span of a larger text, with offsets into the whole text", () => {
    const text = english.slice(0, 3000);
    const [from, to] = [500, 2500];
    const chunks = new RecursiveSplitter(counter, { chunkSize: 50, chunkOverlap: 10 }).split(text, from, to);
    expect(chunks[0].start).toBeGreaterThanOrEqual(from);
    expect(chunks[chunks.length - 1].end).toBeLessThanOrEqual(to);
    expectSoundChunks(text.slice(0, to), chunks, 50, counter, from);
  });
});
