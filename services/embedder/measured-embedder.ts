// Each call to an embedding model, measured: the batch it was given and how long it took (the
// Metrics' quarry_embedder_* series). It wraps the model itself, under the coalescers, so a forward
// pass that joined several documents' chunks counts once, with its real size.
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";
import { wrappedPool, type EmbedderPool } from "./embedder-pool.ts";

export class MeasuredEmbedder implements Embedder {
  constructor(
    private readonly inner: Embedder,
    private readonly metrics: Metrics,
  ) {}

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
