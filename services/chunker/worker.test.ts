// The chunking stage on the SQLite bus: documents.parsed in, chunks.created and progress out.
import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ChunksCreatedSchema, DocumentParsedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics, type Subscription } from "../../lib/bus/event-bus.ts";
import { silentLogger } from "../../lib/logger.ts";
import { stageHarness, type StageHarness } from "../../lib/pipeline/testing/stage-harness.ts";
import { ChunkingThreads } from "./chunking-threads.ts";
import { chunkerConfig } from "./config.ts";
import { startChunkerWorker } from "./worker.ts";

// The installed model's tokenizer, as the assembled chunker uses it.
const tokenizerDir = chunkerConfig(process.env).tokenizerDir;
let h: StageHarness;
let worker: Subscription;
let threads: ChunkingThreads;
beforeEach(async () => {
  h = await stageHarness([Topics.chunksCreated]);
  threads = new ChunkingThreads();
  worker = await startChunkerWorker({
    bus: h.bus,
    threads,
    currentVersion: async () => 7n,
    tokensFor: async () => ({ tokenizerDir, maxInputTokens: 256 }),
    knowledgeBase: async () => ({ embeddingModel: "all-MiniLM-L6-v2-int8", chunking: { strategy: "recursive", chunkSize: 40, chunkOverlap: 0, separators: [] } }),
    logger: silentLogger,
  });
});
afterEach(async () => {
  await worker.close({ graceMs: 0 });
  await threads.close();
  await h.close();
});

const parsed = (text: string) =>
  create(DocumentParsedSchema, { documentId: "doc_1", knowledgeBaseId: "kb_1", version: 7n, fileName: "notes.txt", parsed: { text, mimeType: "text/plain", parser: "builtin:text" } });

describe("chunker worker", () => {
  it("splits a parsed document into chunks.created with the knowledge base's settings, reporting chunking", async () => {
    const text = Array.from({ length: 10 }, (_, i) => `Paragraph ${i + 1} is about leave, expenses and when the cafeteria opens.`).join("\n\n");
    await h.publish(Topics.documentsParsed, DocumentParsedSchema, parsed(text), "doc_1");
    const created = await h.next(Topics.chunksCreated, ChunksCreatedSchema);
    expect(created).toMatchObject({ documentId: "doc_1", knowledgeBaseId: "kb_1", version: 7n, fileName: "notes.txt" });
    expect(created.chunks.length).toBeGreaterThan(1);
    expect(created.chunks.every((c) => c.tokenCount <= 40 && c.documentId === "doc_1")).toBe(true);
    expect(created.chunks.at(-1)!.text).toContain("Paragraph 10 ");
    expect(await h.nextProgress((p) => p.phase === DocumentStatus.CHUNKING)).toMatchObject({ documentId: "doc_1", percent: 30, message: "splitting" });
  });

  it("fails a document with no text, with the reason, and publishes no chunks", async () => {
    await h.publish(Topics.documentsParsed, DocumentParsedSchema, parsed("  \n\n "), "doc_1");
    const failed = await h.nextProgress((p) => p.phase === DocumentStatus.FAILED);
    expect(failed).toMatchObject({ documentId: "doc_1", version: 7n, error: "chunker: the document has no text to index" });
    await expect(h.next(Topics.chunksCreated, ChunksCreatedSchema, undefined, 300)).rejects.toThrow(/no matching event/);
  });
});
