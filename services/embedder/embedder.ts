import type { EmbeddingModelInfo } from "../../lib/domain.ts";

/** Some models embed questions and passages differently (instruction prefixes); MiniLM does not. */
export type EmbeddingKind = "query" | "document";

export interface Embedder {
  info(): EmbeddingModelInfo;
  /**
   * One L2-normalised vector per text, in order. Batching is the implementation's concern. The
   * signal fires when the caller goes away: an implementation that queues calls may drop one none
   * of whose texts it has started (CancelledError); one that does not queue ignores it.
   */
  embed(texts: string[], kind: EmbeddingKind, signal?: AbortSignal): Promise<Float32Array[]>;
  /**
   * Share (0..1) of the text's word pieces the model knows (not its unknown token) and was trained
   * to read (in one of its scripts), punctuation aside; 1 when the model cannot tell. An English
   * model's vector for a Chinese query is noise even where its vocabulary has the characters.
   */
  knownTokenShare(text: string): number;
  /** Word pieces the model reads of a passage, its special tokens included; absent when unknown. */
  tokenCount?(text: string): number;
  /**
   * Texts one call serves at its best when that is a count, not a pass of word pieces: a remote
   * endpoint's request (QUARRY_EMBEDDING_BATCH). Absent for a local model, whose pass tokenCount bounds.
   */
  readonly batchTexts?: number;
  close(): Promise<void>;
}
