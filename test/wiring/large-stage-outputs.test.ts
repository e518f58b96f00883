// The claim check (lib/pipeline/stage-payloads.ts) through the services as the embedded mode
// assembles them: with a low inline limit, every stage output of a document goes to the blob store
// and the bus carries only a reference, yet the document ends with the chunks the chunker makes of
// it; a newer version removes the older one's stored outputs, and deleting the document the rest.
// The embedding model is the OpenAI-compatible stub; the rest is real (SQLite bus, folder blob store, threads).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assembleInProcess } from "../../app/embedded.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { ChunksCreatedSchema, ChunksEmbeddedSchema, DocumentParsedSchema } from "../../gen/quarry/events/v1/events_pb.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { openBlobStore } from "../../lib/blobs/blob-store-from-config.ts";
import type { BlobStore } from "../../lib/blobs/blob-store.ts";
import { Topics, type Subscription } from "../../lib/bus/event-bus.ts";
import { SqliteEventBus } from "../../lib/bus/sqlite-event-bus.ts";
import { sqlitePath, type Env } from "../../lib/config.ts";
import { silentLogger } from "../../lib/logger.ts";
import { redriveSettings } from "../../lib/pipeline/redrive.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import type { AssembledService } from "../../lib/service-runtime.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";

const INLINE_MAX = 4096;

let dir: string;
let bus: SqliteEventBus;
let blobs: BlobStore;
let stub: OpenAiStub;
let services: AssembledService[] = [];
let workers: Subscription[] = [];
let client: Client<typeof QuarryService>;
let index: Client<typeof IndexService>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "quarry-claim-check-"));
  stub = await startOpenAiStub({ embeddingDimension: 32 });
  const env: Env = {
    QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR,
    HOME: process.env.HOME,
    QUARRY_DATA_DIR: dir,
    QUARRY_INSECURE: "1",
    QUARRY_EMBEDDING_PROVIDER: "openai",
    QUARRY_EMBEDDING_BASE_URL: stub.url,
    QUARRY_EMBEDDING_MODEL: "stub-embedding",
    QUARRY_EMBEDDING_DIMENSION: "32",
    QUARRY_STAGE_INLINE_MAX_BYTES: String(INLINE_MAX),
  };
  bus = new SqliteEventBus(sqlitePath(env), { logger: silentLogger });
  await bus.ensureTopics(Object.values(Topics));
  blobs = await openBlobStore(env);
  const assembled = await assembleInProcess(env, { bus, blobs, logger: silentLogger, redrive: redriveSettings(env) });
  services = assembled.services;
  for (const service of services) workers.push(...(await service.startWorkers()));
  client = createClient(QuarryService, inProcessTransport(assembled.gateway.server.routes, assembled.gateway.server.interceptors));
  index = createClient(IndexService, assembled.peers.transport("index"));
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close({ graceMs: 0 })));
  for (const service of [...services].reverse()) await service.close();
  await bus?.close({ graceMs: 0 });
  await stub?.close();
  await rm(dir, { recursive: true, force: true });
});

async function ready(documentId: string, version: bigint) {
  for (let i = 0; ; i++) {
    const current = (await client.getDocument({ documentId })).document!;
    expect(current.status, current.errorMessage).not.toBe(DocumentStatus.FAILED);
    if (current.status === DocumentStatus.READY && current.version === version) return current;
    if (i > 1200) throw new Error(`not ready within 120 s: ${DocumentStatus[current.status]}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const messages = (topic: string) => (bus.db.prepare("SELECT value FROM bus_messages WHERE topic = ? ORDER BY seq").all(topic) as { value: Buffer }[]).map((r) => new Uint8Array(r.value));
const textOf = (i: number) => `Paragraph ${i} of the handbook: claims of type ${i} are paid within ${(i % 9) + 2} days once a manager approves them.`;

describe("stage outputs above the inline limit", () => {
  it("travel as references, end in the chunks the chunker makes, and are removed with older versions and the document", async () => {
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
