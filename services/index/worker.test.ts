// The indexing stage on the SQLite bus: chunks.embedded in, the chunks in the search engine and
// progress out (saving 95%, then ready with the counts), on the stores the embedded mode opens.
import { create } from "@bufbuild/protobuf";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ChunksEmbeddedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics, type Subscription } from "../../lib/bus/event-bus.ts";
import { silentLogger } from "../../lib/logger.ts";
import { stageHarness, type StageHarness } from "../../lib/pipeline/testing/stage-harness.ts";
import { openStores } from "./main.ts";
import { startIndexWorkers } from "./worker.ts";

let h: StageHarness;
let dir: string;
let stores: Awaited<ReturnType<typeof openStores>>;
let workers: Subscription[];
let kbId: string;
let docId: string;
let version: number;
beforeEach(async () => {
  h = await stageHarness([]);
  dir = await mkdtemp(join(tmpdir(), "quarry-index-worker-"));
  stores = await openStores({ QUARRY_DATA_DIR: dir });
  const kb = await stores.catalog.createKnowledgeBase({
    name: "docs",
    description: "",
    embeddingModel: "test-hashing",
    embeddingDimension: 2,
    chunking: { strategy: "recursive", chunkSize: 100, chunkOverlap: 0, separators: [] },
  });
  await stores.engine.ensureKnowledgeBase(kb.id, kb.embeddingDimension);
  const { document } = await stores.catalog.registerDocument({ knowledgeBaseId: kb.id, fileName: "notes.txt", mimeType: "text/plain", sizeBytes: 10, contentHash: "h", version: 7, metadata: {} });
  [kbId, docId, version] = [kb.id, document.id, document.version];
  workers = await startIndexWorkers({ bus: h.bus, catalog: stores.catalog, engine: stores.engine, logger: silentLogger });
});
afterEach(async () => {
  await Promise.all(workers.map((w) => w.close({ graceMs: 0 })));
  await h.close();
  await stores.close();
  await rm(dir, { recursive: true, force: true });
});

const embedded = (vectors: number[][]) =>
  create(ChunksEmbeddedSchema, {
    documentId: docId,
    knowledgeBaseId: kbId,
    version: BigInt(version),
    fileName: "notes.txt",
    embeddingModel: "test-hashing",
    chunks: ["Expense claims are paid monthly.", "The cafeteria opens at eight."].map((text, index) => ({
      chunk: { id: `${docId}-${index}`, documentId: docId, knowledgeBaseId: kbId, index, text, tokenCount: 6, end: text.length },
      vector: vectors[index],
    })),
  });

describe("index worker", () => {
  it("saves a document's chunks to the search engine and reports saving, then ready with the counts", async () => {
    await h.publish(Topics.chunksEmbedded, ChunksEmbeddedSchema, embedded([[1, 0], [0, 1]]), docId);
    const ready = await h.nextProgress((p) => p.phase === DocumentStatus.READY);
    expect(ready).toMatchObject({ documentId: docId, percent: 100, chunkCount: 2, tokenCount: 12, message: "done" });
    expect(h.progress().find((p) => p.phase === DocumentStatus.INDEXING)).toMatchObject({ percent: 95, message: "saving" });
    const hits = await stores.engine.search({ knowledgeBaseIds: [kbId], text: "cafeteria", mode: "bm25", topK: 5, minScore: 0, documentIds: [] });
    expect(hits.map((hit) => hit.chunk.id)).toEqual([`${docId}-1`]);
    expect(await stores.catalog.getDocument(docId)).toMatchObject({ status: "ready", chunkCount: 2 });
  });

  it("fails a document whose vectors do not fit the knowledge base, with the reason, and saves nothing", async () => {
    await h.publish(Topics.chunksEmbedded, ChunksEmbeddedSchema, embedded([[1, 0, 0], [0, 1, 0]]), docId);
    const failed = await h.nextProgress((p) => p.phase === DocumentStatus.FAILED);
    expect(failed.error).toMatch(/^index: chunk .* has a 3-dimensional vector; knowledge base .* stores 2$/);
    expect(failed.error).not.toContain("(retrying)");
    const hits = await stores.engine.search({ knowledgeBaseIds: [kbId], text: "cafeteria", mode: "bm25", topK: 5, minScore: 0, documentIds: [] });
    expect(hits).toEqual([]);
  });
});
