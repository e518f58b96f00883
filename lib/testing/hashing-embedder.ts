import type { EmbeddingModelInfo } from "../domain.ts";

/**
 * FOR TESTS AND BENCH ONLY. A deterministic feature-hashing "embedder": each word (or CJK character)
 * adds ±1 to one slot picked by its hash, then the vector is L2-normalised. Texts sharing words get
 * similar vectors, which is enough to exercise storage, fusion and dimension checks without a model.
 * It knows nothing of meaning, so it is never a default and never a fallback for a missing model.
 * It has the shape of the embedder service's Embedder without naming it (lib/ knows no service):
 * every place that uses it as one checks that shape.
 */
export class HashingEmbedder {
  readonly #info: EmbeddingModelInfo;

  constructor(options: { dimension?: number; model?: string; maxInputTokens?: number } = {}) {
    this.#info = {
      model: options.model ?? "test-hashing",
      dimension: options.dimension ?? 384,
      maxInputTokens: options.maxInputTokens ?? 256,
    };
  }

  /** The endpoint does not say which tokens it knows; its vectors are taken as meaningful. */
  knownTokenShare(_text: string): number {
    return 1;
  }

  info(): EmbeddingModelInfo {
    return { ...this.#info };
  }

  async embed(texts: string[], _kind: "query" | "document"): Promise<Float32Array[]> {
    return texts.map((text) => hashingVector(text, this.#info.dimension));
  }

  async close(): Promise<void> {}
}

/** The vector HashingEmbedder gives a text; exported for the OpenAI stub server. */
export function hashingVector(text: string, dimension: number): Float32Array {
  const vector = new Float32Array(dimension);
  // CJK has no spaces, so each ideograph counts as a word.
  for (const token of text.toLowerCase().match(/\p{Script=Han}|[\p{L}\p{N}]+/gu) ?? []) {
    const hash = fnv1a(token);
    vector[hash % dimension] += hash & 0x80000000 ? -1 : 1;
  }
  let norm = Math.hypot(...vector);
  // An empty text still needs a unit vector to honour the Embedder contract.
  if (norm === 0) {
    vector[0] = 1;
    norm = 1;
  }
  for (let i = 0; i < dimension; i++) vector[i] /= norm;
  return vector;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
