// Which documents get a vector of their own beside their chunks' (ChunkingSettings.documentVector).
// Measured on ArguAna (docs/EVALUATION.md): an argument cut into halves matches a counterargument
// worse than the whole argument does, and for the third of arguments longer than MiniLM reads, the
// first window still beat either half. A model that reads at least half of a document represents
// it; beyond that the first window is an opening, not the document, and its chunks speak for it.
import type { ChunkDraft, ChunkingSettings } from "../../lib/domain.ts";
import { documentInput } from "../../lib/document-input.ts";
import type { TokenCounter } from "../../lib/tokens/tokenizer.ts";
import { maxChunkTokens } from "./chunk-document.ts";

/** The most tokens a document may hold to be embedded whole: the model then reads at least half of it. */
export function maxDocumentVectorTokens(maxInputTokens: number): number {
  return 2 * maxChunkTokens(maxInputTokens);
}

/** The document's input for its document vector, or "" when the base keeps none or the model reads too little of it. */
export function documentVectorText(settings: ChunkingSettings, chunks: readonly ChunkDraft[], counter: TokenCounter, maxInputTokens: number): string {
  if (settings.documentVector !== "auto" || chunks.length === 0) return "";
  const limit = maxDocumentVectorTokens(maxInputTokens);
  // The chunks' tokens less their overlaps bound the document's from below: a long document is
  // turned away without tokenizing all of it again.
  const atLeast = chunks.reduce((sum, c) => sum + c.tokenCount, 0) - (chunks.length - 1) * settings.chunkOverlap;
  if (atLeast > limit) return "";
  const text = documentInput(chunks);
  return counter.count(text) <= limit ? text : "";
}
