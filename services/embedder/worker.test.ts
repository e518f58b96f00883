// The vectorizing stage on the SQLite bus: chunks.created in, chunks.embedded and progress out.
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ChunksCreatedSchema, ChunksEmbeddedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics, type Subscription } from "../../lib/bus/event-bus.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import { silentLogger } from "../../lib/logger.ts";
import { stageHarness, type StageHarness } from "../../lib/pipeline/testing/stage-harness.ts";
import { SingleModelPool } from "./embedder-pool.ts";
import { HashingEmbedder } from "../../lib/testing/hashing-embedder.ts";
import { startEmbedderWorker } from "./worker.ts";

let h: StageHarness;
let worker: Subscription;
async function start(dimension: number) {
  h = await stageHarness([Topics.chunksEmbedded]);
  const kb = { id: "kb_1", name: "docs", embeddingModel: "test-hashing", embeddingDimension: dimension } as KnowledgeBase;
  worker = await startEmbedderWorker({
    bus: h.bus,
    models: new SingleModelPool(new HashingEmbedder({ dimension: 16 })),
    knowledgeBase: async () => kb,
    logger: silentLogger,
    progressEvery: 2,
  });
}
afterEach(async () => {
  await worker.close({ graceMs: 0 });
  await h.close();
});

const created = create(ChunksCreatedSchema, {
  documentId: "doc_1",
  knowledgeBaseId: "kb_1",
  version: 7n,
  fileName: "notes.txt",
  chunks: ["Expense claims are paid monthly.", "The cafeteria opens at eight.", "Leave is asked of a manager."].map((text, index) => ({
    id: `doc_1-${index}`,
    documentId: "doc_1",
    knowledgeBaseId: "kb_1",
    index,
    text,
  })),
});

describe("embedder worker", () => {
  it("embeds every chunk onto chunks.embedded with the model's name, reporting 40% to 90% as batches finish", async () => {
    await start(16);
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, created, "doc_1");
    const embedded = await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema);
    expect(embedded).toMatchObject({ documentId: "doc_1", version: 7n, embeddingModel: "test-hashing" });
    expect(embedded.chunks.map((c) => [c.chunk!.id, c.vector.length])).toEqual([["doc_1-0", 16], ["doc_1-1", 16], ["doc_1-2", 16]]);
    await h.nextProgress((p) => p.percent === 90);
    const embedding = h.progress().filter((p) => p.phase === DocumentStatus.EMBEDDING);
    expect(embedding.map((p) => [p.percent, p.message])).toEqual([
      [40, "vectorizing 0/3 chunks"],
      [73, "vectorizing 2/3 chunks"],
      [90, "vectorizing 3/3 chunks"],
    ]);
  });

  it("fails a document whose knowledge base expects another vector size, naming both, and publishes no vectors", async () => {
    await start(384);
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, created, "doc_1");
    const failed = await h.nextProgress((p) => p.phase === DocumentStatus.FAILED);
    expect(failed.error).toMatch(/^embedder: .*384.*16 from test-hashing/);
    expect(failed.error).not.toContain("(retrying)");
    await expect(h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema, undefined, 300)).rejects.toThrow(/no matching event/);
  });

  it("embeds the document's own text once beside its chunks, and gives none to a document without it", async () => {
    await start(16);
    const documentText = created.chunks.map((c) => c.text).join("\n");
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, { ...created, documentText }, "doc_1");
    const embedded = await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema);
    const [expected] = await new HashingEmbedder({ dimension: 16 }).embed([documentText], "document");
    expect(embedded.documentVector).toEqual(Array.from(expected));
    expect(embedded.chunks).toHaveLength(3);
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, { ...created, documentId: "doc_2", version: 8n }, "doc_2");
    expect((await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema, (e) => e.documentId === "doc_2")).documentVector).toEqual([]);
  });

  it("gives a one-chunk document its chunk's vector as its document vector", async () => {
    await start(16);
    const one = { ...created, chunks: created.chunks.slice(0, 1), documentText: created.chunks[0].text };
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, one, "doc_1");
    const embedded = await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema);
    expect(embedded.documentVector).toEqual(embedded.chunks[0].vector);
  });
});
