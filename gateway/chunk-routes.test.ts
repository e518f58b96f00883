// GetChunkNeighbours on an embedded Quarry over HTTP: a chunk with the chunks around it, in
// document order and clipped at the document's ends; bad input and a chunk of another document
// refused with their codes; a key scoped to one knowledge base cannot read another's chunks.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyRole } from "../gen/quarry/common/v1/api_key_pb.ts";
import { DocumentStatus, type Chunk } from "../gen/quarry/common/v1/common_pb.ts";
import { codeOf } from "../lib/rpc/testing/connect-code.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../test/support/embedded-quarry.ts";

const PARAGRAPHS = [
  "Alpha: the first paragraph tells of the harbour wall, built of grey granite in the spring of one year.",
  "Bravo: the second paragraph tells of the lighthouse keeper, who kept a logbook of ships and weather.",
  "Charlie: the third paragraph tells of the ferry, which crossed the estuary twice a day in summer.",
  "Delta: the fourth paragraph tells of the fish market, opened at dawn by the harbour master.",
  "Echo: the fifth paragraph tells of the lifeboat station, rebuilt after the great storm.",
];

describe("GetChunkNeighbours (embedded Quarry)", () => {
  let quarry: EmbeddedQuarryFixture;
  let chunks: Chunk[];
  let documentId: string;
  let otherDocumentId: string;

  async function ingest(knowledgeBase: string, fileName: string, content: string): Promise<string> {
    const { document } = await quarry.client.uploadDocument({ header: { knowledgeBase, fileName, mimeType: "text/plain" }, content: new TextEncoder().encode(content) });
    let status = DocumentStatus.PENDING;
    for await (const u of quarry.client.watchIngestion({ documentIds: [document!.id] }, { timeoutMs: 60_000 })) status = u.status;
    expect(status).toBe(DocumentStatus.READY);
    return document!.id;
  }

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    await quarry.client.createKnowledgeBase({ name: "harbour", chunking: { chunkSize: 30, chunkOverlap: 0 } });
    await quarry.client.createKnowledgeBase({ name: "other" });
    documentId = await ingest("harbour", "harbour.txt", PARAGRAPHS.join("\n\n"));
    otherDocumentId = await ingest("other", "other.txt", "Nothing about harbours at all, only about mountains.");
    // Every chunk of the document, by searching for each paragraph's first word.
    const found = new Map<number, Chunk>();
    for (const p of PARAGRAPHS) {
      const { hits } = await quarry.client.search({ query: p, knowledgeBases: ["harbour"], settings: { topK: 10 } });
      for (const h of hits) found.set(h.chunk!.index, h.chunk!);
    }
    chunks = [...found.values()].sort((a, b) => a.index - b.index);
  }, 120_000);

  afterAll(async () => {
    await quarry?.stop();
  });

  it("returns the chunk and its neighbours in document order, clipped at the ends", async () => {
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    const middle = chunks[2];
    const one = await quarry.client.getChunkNeighbours({ documentId, chunkId: middle.id });
    expect(one.chunk!.text).toBe(middle.text);
    expect(one.before.map((c) => c.index)).toEqual([1]);
    expect(one.after.map((c) => c.index)).toEqual([3]);
    expect(one.before[0].text).toBe(chunks[1].text);

    const two = await quarry.client.getChunkNeighbours({ documentId, chunkId: middle.id, neighbours: 2 });
    expect([...two.before, two.chunk!, ...two.after].map((c) => c.index)).toEqual([0, 1, 2, 3, 4]);

    const first = await quarry.client.getChunkNeighbours({ documentId, chunkId: chunks[0].id, neighbours: 3 });
    expect(first.before).toEqual([]);
    expect(first.after.map((c) => c.index)).toEqual([1, 2, 3]);
    const last = chunks.at(-1)!;
    const end = await quarry.client.getChunkNeighbours({ documentId, chunkId: last.id });
    expect(end.after).toEqual([]);
    expect(end.before.map((c) => c.index)).toEqual([last.index - 1]);
  });

  it("refuses bad input and a chunk that is not in the named document", async () => {
    expect(await codeOf(quarry.client.getChunkNeighbours({ documentId, chunkId: "" }))).toBe("InvalidArgument");
    expect(await codeOf(quarry.client.getChunkNeighbours({ documentId, chunkId: chunks[0].id, neighbours: 6 }))).toBe("InvalidArgument");
    expect(await codeOf(quarry.client.getChunkNeighbours({ documentId: "doc_nope", chunkId: chunks[0].id }))).toBe("NotFound");
    expect(await codeOf(quarry.client.getChunkNeighbours({ documentId, chunkId: "chunk_nope" }))).toBe("NotFound");
    // A chunk of the harbour named with the other document (what a scoped key could try).
    expect(await codeOf(quarry.client.getChunkNeighbours({ documentId: otherDocumentId, chunkId: chunks[0].id }))).toBe("NotFound");
  });

  it("checks a scoped key against the document's knowledge base", async () => {
    const admin = (await quarry.client.createApiKey({ name: "admin", role: ApiKeyRole.ADMIN })).secret;
    const asAdmin = { headers: { authorization: `Bearer ${admin}` } };
    const reader = (await quarry.client.createApiKey({ name: "other-reader", role: ApiKeyRole.READER, knowledgeBases: ["other"] }, asAdmin)).secret;
    const asReader = { headers: { authorization: `Bearer ${reader}` } };
    expect(await codeOf(quarry.client.getChunkNeighbours({ documentId, chunkId: chunks[0].id }))).toBe("Unauthenticated");
    // Out of its scope, the document answers as if it did not exist.
    expect(await codeOf(quarry.client.getChunkNeighbours({ documentId, chunkId: chunks[0].id }, asReader))).toBe("NotFound");
    expect(await codeOf(quarry.client.getChunkNeighbours({ documentId: otherDocumentId, chunkId: chunks[0].id }, asReader))).toBe("NotFound");
    expect((await quarry.client.getChunkNeighbours({ documentId, chunkId: chunks[1].id }, asAdmin)).before).toHaveLength(1);
  });
});
