import type { EmbeddingModelInfo } from "../../lib/domain.ts";

/** Some models embed questions and passages differently (instruction prefixes); MiniLM does not. */
export type EmbeddingKind = "query" | "document";

export interface Embedder {
  info(): EmbeddingModelInfo;
  /** One L2-normalised vector per text, in order. Batching is the implementation's concern. */
  embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]>;
  /**
   * Share (0..1) of the text's word pieces the model knows (not its unknown token), punctuation
   * aside; 1 when the model cannot tell. An English word-piece model reads most Chinese as
   * unknown, and its vector for such a query is noise.
   */
  knownTokenShare(text: string): number;
  close(): Promise<void>;
}
