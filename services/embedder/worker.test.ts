// The vectorizing stage on the SQLite bus: chunks.created in, chunks.embedded and progress out.
import { create } from "@bufbuild/protobuf";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ChunksCreatedSchema, ChunksEmbeddedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics, type Subscription } from "../../lib/bus/event-bus.ts";
import type { KnowledgeBase } from "../../lib/domain.ts";
import { silentLogger } from "../../lib/logger.ts";
import { stageHarness, type StageHarness } from "../../lib/pipeline/testing/stage-harness.ts";
import { SingleModelPool } from "./embedder-pool.ts";
import { HashingEmbedder } from "../../lib/testing/hashing-embedder.ts";
import { startEmbedderWorker } from "./worker.ts";
import { SqliteEmbeddingCheckpoints } from "./embedding-checkpoints.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";

/** The hashing embedder, counting each text it embeds; `stall` makes its next calls wait for good (a process stopped mid-batch). */
class CountingEmbedder extends HashingEmbedder {
  readonly embedded = new Map<string, number>();
  stallAfterCalls = Infinity;
  #calls = 0;
  override async embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    for (const text of texts) this.embedded.set(text, (this.embedded.get(text) ?? 0) + 1);
    if (++this.#calls > this.stallAfterCalls) await new Promise(() => {});
    return super.embed(texts, kind);
  }
}

/** The hashing embedder, recording each model call; calls wait while `held` (the model busy with a long pass). */
class GatedEmbedder extends HashingEmbedder {
  readonly calls: string[][] = [];
  #open!: () => void;
  #gate = new Promise<void>((resolve) => (this.#open = resolve));
  release(): void {
    this.#open();
  }
  override async embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    this.calls.push(texts);
    await this.#gate;
    return super.embed(texts, kind);
  }
}

function chunksCreated(documentId: string, texts: string[]) {
  return create(ChunksCreatedSchema, {
    documentId,
    knowledgeBaseId: "kb_1",
    version: 7n,
    fileName: `${documentId}.txt`,
    chunks: texts.map((text, index) => ({ id: `${documentId}-${index}`, documentId, knowledgeBaseId: "kb_1", index, text })),
  });
}

// Kept across a stop and a start within one test: the bus outlives the process that stopped.
let h = undefined as unknown as StageHarness;
let worker: Subscription | undefined;
let dir: string;
let checkpoints: SqliteEmbeddingCheckpoints | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "quarry-embed-"));
});
async function start(dimension: number, options: { embedder?: Embedder; currentVersion?: (id: string) => Promise<bigint | undefined> } = {}) {
  h ??= await stageHarness([Topics.chunksEmbedded]);
  const kb = { id: "kb_1", name: "docs", embeddingModel: "test-hashing", embeddingDimension: dimension } as KnowledgeBase;
  checkpoints = new SqliteEmbeddingCheckpoints(join(dir, "checkpoints.sqlite"));
  worker = await startEmbedderWorker({
    bus: h.bus,
    models: new SingleModelPool(options.embedder ?? new HashingEmbedder({ dimension: 16 })),
    knowledgeBase: async () => kb,
    currentVersion: options.currentVersion ?? (async () => 7n),
    checkpoints,
    logger: silentLogger,
    progressEvery: 2,
  });
}
/** What a stopped process does: its work in hand is released uncommitted, its files closed. */
async function stop() {
  await worker?.close({ graceMs: 0 });
  checkpoints?.close();
  worker = undefined;
}
afterEach(async () => {
  await stop();
  await h?.close();
  h = undefined as unknown as StageHarness;
  await rm(dir, { recursive: true, force: true });
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

  const long = create(ChunksCreatedSchema, {
    documentId: "doc_1",
    knowledgeBaseId: "kb_1",
    version: 7n,
    fileName: "long.txt",
    chunks: Array.from({ length: 10 }, (_, index) => ({ id: `doc_1-${index}`, documentId: "doc_1", knowledgeBaseId: "kb_1", index, text: `Chunk number ${index} of the long document.` })),
  });

  it("resumes a document stopped mid-way from its last stored batch: no chunk is embedded more than twice", async () => {
    const first = new CountingEmbedder({ dimension: 16 });
    first.stallAfterCalls = 2;
    await start(16, { embedder: first });
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, long, "doc_1");
    await h.nextProgress((p) => p.message === "vectorizing 4/10 chunks");
    await stop();

    const second = new CountingEmbedder({ dimension: 16 });
    await start(16, { embedder: second });
    const embedded = await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema);
    const texts = long.chunks.map((c) => c.text);
    const [expected] = await new HashingEmbedder({ dimension: 16 }).embed([texts[0]], "document");
    expect(embedded.chunks.map((c) => c.chunk!.id)).toEqual(long.chunks.map((c) => c.id));
    expect(embedded.chunks[0].vector).toEqual(Array.from(expected));
    // The two stored batches are not embedded again; the batch in hand when it stopped is, once.
    expect(texts.map((t) => second.embedded.get(t) ?? 0)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    expect(texts.map((t) => (first.embedded.get(t) ?? 0) + (second.embedded.get(t) ?? 0))).toEqual([1, 1, 1, 1, 2, 2, 1, 1, 1, 1]);
    expect(h.progress().some((p) => p.message === "vectorizing 4/10 chunks" && p.percent === 60)).toBe(true);
  });

  it("skips a second delivery of a version it already published, without embedding", async () => {
    const counting = new CountingEmbedder({ dimension: 16 });
    await start(16, { embedder: counting });
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, created, "doc_1");
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, created, "doc_1");
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, { ...created, documentId: "doc_2" }, "doc_2");
    await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema, (e) => e.documentId === "doc_2");
    await stop();
    const published = await h.bus.db.prepare("SELECT COUNT(*) AS n FROM bus_messages WHERE topic = ? AND key = ?").get(Topics.chunksEmbedded, "doc_1");
    expect(published).toEqual({ n: 1 });
    expect([...counting.embedded.values()].every((n) => n === 2)).toBe(true);
    expect(counting.embedded.size).toBe(3);
  });

  it("skips, unembedded, chunks of a deleted document and of a superseded version", async () => {
    const counting = new CountingEmbedder({ dimension: 16 });
    const current = new Map([["doc_1", 9n]]);
    await start(16, { embedder: counting, currentVersion: async (id) => current.get(id) });
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, created, "doc_1");
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, { ...created, documentId: "doc_gone" }, "doc_gone");
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, { ...created, version: 9n }, "doc_1");
    const embedded = await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema);
    expect(embedded).toMatchObject({ documentId: "doc_1", version: 9n });
    await stop();
    expect([...counting.embedded.values()]).toEqual([1, 1, 1]);
    expect(h.progress().filter((p) => p.version === 7n)).toEqual([]);
  });

  it("sorts the chunks of every document waiting by length together, and gives each document its own vectors in order and its own progress", async () => {
    const gated = new GatedEmbedder({ dimension: 16 });
    await start(16, { embedder: gated });
    // The first document holds the model; the three behind it wait in one window.
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, chunksCreated("doc_first", ["busy"]), "doc_first");
    await until(() => gated.calls.length === 1);
    const docs = {
      doc_a: ["a medium chunk of text", "a", "the longest chunk of all the documents here"],
      doc_b: ["bb", "a rather long chunk, second longest"],
      doc_c: ["a short one", "medium length text here"],
    };
    for (const [id, texts] of Object.entries(docs)) await h.publish(Topics.chunksCreated, ChunksCreatedSchema, chunksCreated(id, texts), id);
    // Each document's first batch (progressEvery: 2 chunks) is waiting for the model.
    await until(() => h.progress().filter((p) => p.message.startsWith("vectorizing 0/")).length === 4);
    gated.release();
    const direct = new HashingEmbedder({ dimension: 16 });
    for (const [id, texts] of Object.entries(docs)) {
      const embedded = await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema, (e) => e.documentId === id);
      expect(embedded.chunks.map((c) => c.chunk!.id)).toEqual(texts.map((_, i) => `${id}-${i}`));
      expect(embedded.chunks.map((c) => c.vector)).toEqual((await direct.embed(texts, "document")).map((v) => Array.from(v)));
      await h.nextProgress((p) => p.documentId === id && p.message === `vectorizing ${texts.length}/${texts.length} chunks`);
    }
    // The window after the first call held the first batch of all three documents, longest first.
    const window = gated.calls[1];
    const firstBatches = Object.values(docs).flatMap((texts) => texts.slice(0, 2));
    expect([...window].sort()).toEqual([...firstBatches].sort());
    expect(window.map((t) => t.length)).toEqual([...window.map((t) => t.length)].sort((x, y) => y - x));
    for (const [id, texts] of Object.entries(docs)) {
      const reported = h.progress().filter((p) => p.documentId === id && p.phase === DocumentStatus.EMBEDDING).map((p) => p.message);
      expect(reported[0]).toBe(`vectorizing 0/${texts.length} chunks`);
      expect(reported.at(-1)).toBe(`vectorizing ${texts.length}/${texts.length} chunks`);
    }
  });

  it("skips the rest of a document deleted while its chunks waited in the window, and publishes the others of that window", async () => {
    const gated = new GatedEmbedder({ dimension: 16 });
    const current = new Map([
      ["doc_first", 7n],
      ["doc_gone", 7n],
      ["doc_kept", 7n],
    ]);
    await start(16, { embedder: gated, currentVersion: async (id) => current.get(id) });
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, chunksCreated("doc_first", ["busy"]), "doc_first");
    await until(() => gated.calls.length === 1);
    const gone = ["gone one", "gone two", "gone three", "gone four"];
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, chunksCreated("doc_gone", gone), "doc_gone");
    await h.publish(Topics.chunksCreated, ChunksCreatedSchema, chunksCreated("doc_kept", ["kept one", "kept two"]), "doc_kept");
    await until(() => h.progress().filter((p) => p.message.startsWith("vectorizing 0/")).length === 3);
    current.delete("doc_gone");
    gated.release();
    const kept = await h.next(Topics.chunksEmbedded, ChunksEmbeddedSchema, (e) => e.documentId === "doc_kept");
    expect(kept.chunks).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 300));
    await stop();
    // Its first batch was in the window already; the second was never sent, nothing was published.
    expect(gated.calls.flat().filter((t) => t.startsWith("gone"))).toEqual(expect.arrayContaining(gone.slice(0, 2)));
    expect(gated.calls.flat()).not.toContain("gone three");
    const published = h.bus.db.prepare("SELECT COUNT(*) AS n FROM bus_messages WHERE topic = ? AND key = ?").get(Topics.chunksEmbedded, "doc_gone");
    expect(published).toEqual({ n: 0 });
  });
});

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
