// Each call to an embedding model, measured: the batch it was given and how long it took (the
// Metrics' quarry_embedder_* series). It wraps the model itself, under the coalescers, so a forward
// pass that joined several documents' chunks counts once, with its real size.
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";
import { wrappedPool, type EmbedderPool } from "./embedder-pool.ts";

export class MeasuredEmbedder implements Embedder {
  // What the coalescer above sizes its bands by, passed through: without tokenCount it would band a
  // local model's texts by characters instead of by the word pieces of one pass.
  readonly tokenCount?: (text: string) => number;
  readonly batchTexts?: number;

  constructor(
    private readonly inner: Embedder,
    private readonly metrics: Metrics,
  ) {
    if (inner.tokenCount) this.tokenCount = (text) => inner.tokenCount!(text);
    if (inner.batchTexts !== undefined) this.batchTexts = inner.batchTexts;
  }

  info(): EmbeddingModelInfo {
    return this.inner.info();
  }

  knownTokenShare(text: string): number {
    return this.inner.knownTokenShare(text);
  }

  async embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    const started = performance.now();
    const vectors = await this.inner.embed(texts, kind);
    this.metrics.embedBatch(this.inner.info().model, texts.length, (performance.now() - started) / 1000);
    return vectors;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The pool's models, each measured. */
export function measuredPool(pool: EmbedderPool, metrics: Metrics): EmbedderPool {
  return wrappedPool(pool, (embedder) => new MeasuredEmbedder(embedder, metrics));
}
