import type { EmbeddingModelInfo } from "../../lib/domain.ts";

/** Some models embed questions and passages differently (instruction prefixes); MiniLM does not. */
export type EmbeddingKind = "query" | "document";

export interface Embedder {
  info(): EmbeddingModelInfo;
  /** One L2-normalised vector per text, in order. Batching is the implementation's concern. */
  embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]>;
  close(): Promise<void>;
}
