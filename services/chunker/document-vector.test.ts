import { describe, expect, it } from "vitest";
import type { ChunkDraft, ChunkingSettings } from "../../lib/domain.ts";
import { documentInput } from "../../lib/document-input.ts";
import type { TokenCounter } from "../../lib/tokens/tokenizer.ts";
import { defaultChunkingSettings, validateChunkingSettings } from "./chunk-document.ts";
import { documentVectorText, maxDocumentVectorTokens } from "./document-vector.ts";

// One token per word keeps the expected lengths plain to see.
const words: TokenCounter = { count: (text) => text.split(/\s+/).filter(Boolean).length };
const MAX_INPUT = 22; // 20 tokens per input after the two special tokens; a document may hold 40.

function draftsOf(wordCount: number, chunkWords = 10): { drafts: ChunkDraft[]; text: string } {
  const text = Array.from({ length: wordCount }, (_, i) => `w${i}`).join(" ");
  const starts: number[] = [];
  const re = /\S+/g;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index);
  const drafts: ChunkDraft[] = [];
  for (let i = 0; i < wordCount; i += chunkWords) {
    const start = starts[i];
    const last = Math.min(i + chunkWords, wordCount) - 1;
    const end = starts[last] + `w${last}`.length;
    drafts.push({ index: drafts.length, text: text.slice(start, end), tokenCount: last - i + 1, page: 0, pageEnd: 0, sectionPath: ["Title"], start, end });
  }
  return { drafts, text };
}

const auto: ChunkingSettings = { strategy: "recursive", chunkSize: 10, chunkOverlap: 0, separators: [], documentVector: "auto" };

describe("documentVectorText", () => {
  it("gives a document the model reads at least half of its whole text as its input", () => {
    expect(maxDocumentVectorTokens(MAX_INPUT)).toBe(40);
    const { drafts } = draftsOf(39);
    const text = documentVectorText(auto, drafts, words, MAX_INPUT);
    expect(text).toBe(documentInput(drafts));
    expect(text.startsWith("w0 w1")).toBe(true);
    expect(words.count(text)).toBe(39);
  });

  it("gives none to a longer document, nor to any document of a base that keeps none", () => {
    expect(documentVectorText(auto, draftsOf(40).drafts, words, MAX_INPUT)).not.toBe("");
    expect(documentVectorText(auto, draftsOf(41).drafts, words, MAX_INPUT)).toBe("");
    expect(documentVectorText(auto, draftsOf(400).drafts, words, MAX_INPUT)).toBe("");
    expect(documentVectorText({ ...auto, documentVector: "off" }, draftsOf(5).drafts, words, MAX_INPUT)).toBe("");
    expect(documentVectorText({ ...auto, documentVector: undefined }, draftsOf(5).drafts, words, MAX_INPUT)).toBe("");
  });

  it("is a one-chunk document's chunk text", () => {
    const { drafts } = draftsOf(8);
    expect(documentVectorText(auto, drafts, words, MAX_INPUT)).toBe(drafts[0].text);
  });

  it("is on for new bases and refuses an unknown mode", () => {
    expect(defaultChunkingSettings(256).documentVector).toBe("auto");
    expect(() => validateChunkingSettings({ ...auto, chunkSize: 64, documentVector: "always" as never }, 256)).toThrow(/unknown document vector mode "always"; it is "auto" or "off"/);
  });
});
