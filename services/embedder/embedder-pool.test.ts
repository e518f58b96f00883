// What the coalescer in front of a model sizes its bands by, through the wrappers the embedder
// service puts around it: a local model's word pieces per pass, a remote endpoint's texts per request.
import { describe, expect, it } from "vitest";
import { noMetrics } from "../../lib/metrics/metrics.ts";
import { HashingEmbedder } from "../../lib/testing/hashing-embedder.ts";
import { coalescingPool, SingleModelPool } from "./embedder-pool.ts";
import type { EmbeddingKind } from "./embedder.ts";
import { measuredPool } from "./measured-embedder.ts";

/** A hashing embedder that records the size of each call it gets. */
class Recording extends HashingEmbedder {
  readonly sizes: number[] = [];
  override async embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    this.sizes.push(texts.length);
    return super.embed(texts, kind);
  }
}

/** Like an OpenAI-compatible endpoint: no word-piece count, a batch of texts per request. */
class RemoteLike extends Recording {
  readonly batchTexts = 32;
}

/** Like the local model: it counts word pieces (here one per character), and has no batch of texts. */
class LocalLike extends Recording {
  tokenCount(text: string): number {
    return text.length;
  }
}

const chunks = (n: number, length: number) => Array.from({ length: n }, (_, i) => `${i} `.padEnd(length, "x"));

describe("coalescingPool over the measured model", () => {
  it("sends a remote endpoint requests of its batch of texts, not of a local pass's characters", async () => {
    const remote = new RemoteLike();
    const pool = coalescingPool(measuredPool(new SingleModelPool(remote), noMetrics), 256);
    const vectors = await (await pool.get()).embed(chunks(64, 900), "document");
    expect(remote.sizes).toEqual([32, 32]);
    expect(vectors).toEqual(await new HashingEmbedder().embed(chunks(64, 900), "document"));
  });

  it("bands a local model's texts by its word pieces: one padded pass of 2048 each", async () => {
    const local = new LocalLike();
    const pool = coalescingPool(measuredPool(new SingleModelPool(local), noMetrics), 256);
    await (await pool.get()).embed(chunks(40, 200), "document");
    // 2048 ÷ 200 pieces: 10 texts a pass (by characters, 8192 would have let 32 through, padded to 6,400).
    expect(local.sizes).toEqual([10, 10, 10, 10]);
  });
});
