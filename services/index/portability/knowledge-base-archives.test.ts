// The import's batches on the embedded stores: an archive of several batches arrives whole, and one
// cut short after its first batches were written leaves no base, document or chunk behind.
import { describe, expect, it } from "vitest";
import { documentIdFor } from "../../../lib/catalog-ids.ts";
import { SqliteCatalog } from "../sqlite/sqlite-catalog.ts";
import { SqliteSearchEngine } from "../sqlite/sqlite-search-engine.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";
import { encodeVector, writeArchive, type ArchivedDocument } from "./archive-format.ts";
import { KnowledgeBaseArchives } from "./knowledge-base-archives.ts";

const DIMENSION = 4;
const DOCUMENTS = 450;
const CHUNKS_PER_DOCUMENT = 5;

function archivedDocument(n: number): ArchivedDocument {
  const failed = n === 7;
  return {
    fileName: `doc-${String(n).padStart(4, "0")}.txt`,
    mimeType: "text/plain",
    sizeBytes: 100,
    contentHash: `hash-${n}`,
    version: 1,
    status: failed ? "failed" : "ready",
    errorMessage: failed ? "the parser gave up" : "",
    enabled: n !== 3,
    metadata: { n: String(n) },
    chunkCount: failed ? 0 : CHUNKS_PER_DOCUMENT,
    tokenCount: failed ? 0 : CHUNKS_PER_DOCUMENT * 3,
    createdAt: new Date(0).toISOString(),
    wholeDocumentVector: false,
    chunks: failed
      ? []
      : Array.from({ length: CHUNKS_PER_DOCUMENT }, (_, index) => ({
          index,
          text: `document ${n} part ${index} word${n}x${index}`,
          tokenCount: 3,
          page: 0,
          pageEnd: 0,
          sectionPath: [],
          start: index * 10,
          end: index * 10 + 9,
          vector: encodeVector(new Float32Array([1, n, index, 1])),
        })),
  };
}

async function archiveBytes(): Promise<Buffer> {
  async function* documents() {
    for (let n = 0; n < DOCUMENTS; n++) yield archivedDocument(n);
  }
  const parts: Buffer[] = [];
  const header = { exportedAt: new Date().toISOString(), vectors: true, knowledgeBase: { name: "batched", description: "", embeddingModel: "m", embeddingDimension: DIMENSION, chunking: { strategy: "recursive" as const, chunkSize: 100, chunkOverlap: 0, separators: [] } } };
  for await (const part of writeArchive(header, documents())) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

async function* bytesOf(buffer: Buffer): AsyncGenerator<Uint8Array> {
  // Small pieces, as a network stream would deliver them.
  for (let at = 0; at < buffer.length; at += 4096) yield buffer.subarray(at, at + 4096);
}

async function withStores(run: (stores: { catalog: SqliteCatalog; engine: SqliteSearchEngine; archives: KnowledgeBaseArchives; countChunks(): number }) => Promise<void>) {
  const { db, cleanup } = openTestDatabase();
  try {
    const catalog = new SqliteCatalog(db);
    const engine = new SqliteSearchEngine(db);
    const countChunks = () => (db.prepare(`SELECT COUNT(*) AS n FROM chunks`).get() as { n: number }).n;
    await run({ catalog, engine, archives: new KnowledgeBaseArchives({ catalog, engine }), countChunks });
  } finally {
    await cleanup();
  }
}

describe("KnowledgeBaseArchives.import in batches", () => {
  it("imports an archive of several batches whole: every document with its status, flag and chunks", async () => {
    const bytes = await archiveBytes();
    await withStores(async ({ catalog, engine, archives, countChunks }) => {
      const summary = await archives.import(bytesOf(bytes), {});
      expect(summary).toMatchObject({ documents: DOCUMENTS, chunks: (DOCUMENTS - 1) * CHUNKS_PER_DOCUMENT, reembedded: false });
      const kb = summary.knowledgeBase;
      expect(kb).toMatchObject({ name: "batched", documentCount: DOCUMENTS, chunkCount: (DOCUMENTS - 1) * CHUNKS_PER_DOCUMENT });
      const documents = await catalog.listDocuments(kb.id);
      expect(documents).toHaveLength(DOCUMENTS);
      expect(documents.filter((d) => d.status === "ready")).toHaveLength(DOCUMENTS - 1);
      expect(documents.find((d) => d.fileName === "doc-0007.txt")).toMatchObject({ status: "failed", errorMessage: "the parser gave up", chunkCount: 0 });
      expect(documents.find((d) => d.fileName === "doc-0003.txt")?.enabled).toBe(false);
      expect(countChunks()).toBe((DOCUMENTS - 1) * CHUNKS_PER_DOCUMENT);
      // The last document (in the last batch) has its chunks and vectors as archived.
      const last = await engine.documentWithVectors(kb.id, documentIdFor(kb.id, "doc-0449.txt"));
      expect(last.chunks.map((c) => c.text)).toEqual(archivedDocument(449).chunks.map((c) => c.text));
      expect(Array.from(last.chunks[2].vector)).toEqual([1, 449, 2, 1]);
    });
  });

  it("leaves nothing behind when the archive stops after its first batches were written", async () => {
    const bytes = await archiveBytes();
    await withStores(async ({ catalog, archives, countChunks }) => {
      // Most of the file: the first batches are read (and written) before the end is found missing.
      const cut = bytes.subarray(0, Math.floor(bytes.length * 0.9));
      await expect(archives.import(bytesOf(cut), {})).rejects.toThrow(/the archive is truncated/);
      expect(await catalog.listKnowledgeBases()).toEqual([]);
      expect(countChunks()).toBe(0);
    });
  });
});
