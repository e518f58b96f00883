// The claim check (lib/pipeline/stage-payloads.ts) through the services as the embedded mode
// assembles them: with a low inline limit, every stage output of a document goes to the blob store
// and the bus carries only a reference, yet the document ends with the chunks the chunker makes of
// it; a newer version removes the older one's stored outputs, and deleting the document the rest.
// The embedding model is the OpenAI-compatible stub; the rest is real (SQLite bus, folder blob store, threads).
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ChunksCreatedSchema, ChunksEmbeddedSchema, DocumentParsedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { Topics } from "../../lib/bus/event-bus.ts";
import { startInProcessPipeline, type InProcessPipeline } from "./in-process-pipeline.ts";

const INLINE_MAX = 4096;

let pipeline: InProcessPipeline;
beforeAll(async () => {
  pipeline = await startInProcessPipeline({ QUARRY_STAGE_INLINE_MAX_BYTES: String(INLINE_MAX) });
}, 120_000);
afterAll(() => pipeline?.close());

async function ready(documentId: string, version: bigint) {
  const { client } = pipeline;
  for (let i = 0; ; i++) {
    const current = (await client.getDocument({ documentId })).document!;
    expect(current.status, current.errorMessage).not.toBe(DocumentStatus.FAILED);
    if (current.status === DocumentStatus.READY && current.version === version) return current;
    if (i > 1200) throw new Error(`not ready within 120 s: ${DocumentStatus[current.status]}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const messages = (topic: string) => (pipeline.bus.db.prepare("SELECT value FROM bus_messages WHERE topic = ? ORDER BY seq").all(topic) as { value: Buffer }[]).map((r) => new Uint8Array(r.value));
const textOf = (i: number) => `Paragraph ${i} of the handbook: claims of type ${i} are paid within ${(i % 9) + 2} days once a manager approves them.`;

describe("stage outputs above the inline limit", () => {
  it("travel as references, end in the chunks the chunker makes, and are removed with older versions and the document", async () => {
    const { client, index, blobs } = pipeline;
    const { knowledgeBase } = await client.createKnowledgeBase({ name: "claim-check", chunking: { chunkSize: 48, chunkOverlap: 0 } });
    const kb = knowledgeBase!.id;
    const content = new TextEncoder().encode(Array.from({ length: 300 }, (_, i) => textOf(i)).join("\n\n"));
    const { document } = await client.uploadDocument({ header: { knowledgeBase: kb, fileName: "handbook.txt", mimeType: "text/plain" }, content });
    const first = await ready(document!.id, document!.version);

    // On the bus: small events naming the blob; the whole outputs are far above the limit.
    for (const [topic, schema] of [[Topics.documentsParsed, DocumentParsedSchema], [Topics.chunksCreated, ChunksCreatedSchema], [Topics.chunksEmbedded, ChunksEmbeddedSchema]] as const) {
      const [value] = messages(topic);
      expect(value!.byteLength, topic).toBeLessThan(1024);
      const event = fromBinary(schema, value!);
      expect(event.payloadUri, topic).toMatch(/^file:\/\//);
      expect((await blobs.read(blobs.keyOf(event.payloadUri))).byteLength, topic).toBeGreaterThan(INLINE_MAX);
    }

    // The same chunks as the chunker's own preview of the file with the base's settings.
    const preview = await client.previewChunks({ fileName: "handbook.txt", content, mimeType: "text/plain", knowledgeBase: kb, maxChunks: 10_000 });
    expect(first.chunkCount).toBe(preview.totalChunks);
    const positions = Array.from({ length: first.chunkCount }, (_, i) => ({ documentId: document!.id, index: i, knowledgeBaseId: kb }));
    const stored = (await index.getChunks({ positions })).chunks;
    expect(stored.map((c) => c.text)).toEqual(preview.chunks.map((c) => c.text));
    const prefix = `payloads/${kb}/${document!.id}/`;
    expect(await blobs.list(prefix)).toHaveLength(3);

    // A newer version's outputs replace the older one's.
    const changed = new TextEncoder().encode(Array.from({ length: 320 }, (_, i) => textOf(i)).join("\n\n"));
    const second = await client.uploadDocument({ header: { knowledgeBase: kb, fileName: "handbook.txt", mimeType: "text/plain" }, content: changed });
    await ready(document!.id, second.document!.version);
    // Removed right after the version is marked ready.
    let kept = await blobs.list(prefix);
    for (let i = 0; kept.length > 3 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      kept = await blobs.list(prefix);
    }
    expect(kept).toHaveLength(3);
    expect(kept.every((key) => key.startsWith(`${prefix}${second.document!.version}.`))).toBe(true);

    await client.deleteDocument({ documentId: document!.id });
    expect(await blobs.list(prefix)).toEqual([]);
  }, 240_000);
});
