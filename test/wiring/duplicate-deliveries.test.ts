// Every stage's message delivered twice (what a lapsed lease or a crash after publishing does) to
// the services as the embedded mode assembles them: the document still ends ready with each chunk
// stored once, and the expensive step runs once — every chunk is embedded once, since the embedder
// skips a version it already published and the index one it already stored. The embedding model is
// the OpenAI-compatible stub (to count what is embedded); the rest is real (SQLite file, bus, threads).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { assembleInProcess } from "../../app/embedded.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { openBlobStore } from "../../lib/blobs/blob-store-from-config.ts";
import { Topics, type EventBus, type Subscription } from "../../lib/bus/event-bus.ts";
import { SqliteEventBus } from "../../lib/bus/sqlite-event-bus.ts";
import { sqlitePath, type Env } from "../../lib/config.ts";
import { silentLogger } from "../../lib/logger.ts";
import { redriveSettings } from "../../lib/pipeline/redrive.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import type { AssembledService } from "../../lib/service-runtime.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";

const STAGE_TOPICS: string[] = [Topics.documentsSubmitted, Topics.documentsParsed, Topics.chunksCreated, Topics.chunksEmbedded];

/** The real bus, except that each stage's handler gets every message twice in a row. */
function deliveringTwice(bus: EventBus): EventBus {
  return Object.create(bus, {
    subscribe: {
      value: (options: Parameters<EventBus["subscribe"]>[0]) =>
        bus.subscribe(
          options.topics.every((t) => STAGE_TOPICS.includes(t))
            ? {
                ...options,
                handler: async (message) => {
                  await options.handler(message);
                  await options.handler(message);
                },
              }
            : options,
        ),
    },
  });
}

let dir: string;
let bus: SqliteEventBus;
let stub: OpenAiStub;
let services: AssembledService[] = [];
let workers: Subscription[] = [];
let client: Client<typeof QuarryService>;
let index: Client<typeof IndexService>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "quarry-twice-"));
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
  };
  // The SQLite log itself, not openEventBus's wrapped one: the test reads its tables to know when
  // every double delivery is done.
  bus = new SqliteEventBus(sqlitePath(env), { logger: silentLogger });
  await bus.ensureTopics(Object.values(Topics));
  const shared = { bus: deliveringTwice(bus), blobs: await openBlobStore(env), logger: silentLogger, redrive: redriveSettings(env) };
  const assembled = await assembleInProcess(env, shared);
  services = assembled.services;
  const { gateway, peers } = assembled;
  for (const service of services) workers.push(...(await service.startWorkers()));
  client = createClient(QuarryService, inProcessTransport(gateway.server.routes, gateway.server.interceptors));
  index = createClient(IndexService, peers.transport("index"));
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close({ graceMs: 0 })));
  for (const service of [...services].reverse()) await service.close();
  await bus?.close({ graceMs: 0 });
  await stub?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Waits until each stage's group has committed everything on its topic (every double delivery done). */
async function settled(): Promise<void> {
  const groups: Record<string, string> = { parser: Topics.documentsSubmitted, chunker: Topics.documentsParsed, embedder: Topics.chunksCreated, index: Topics.chunksEmbedded };
  const lag = () =>
    Object.entries(groups).some(([group, topic]) => {
      const end = bus.db.prepare("SELECT MAX(seq) AS seq FROM bus_messages WHERE topic = ?").get(topic) as { seq: number | null };
      const done = bus.db.prepare("SELECT committed_seq AS seq FROM bus_offsets WHERE group_id = ? AND topic = ?").get(group, topic) as { seq: number } | undefined;
      return (end.seq ?? 0) > (done?.seq ?? 0);
    });
  for (let i = 0; lag(); i++) {
    if (i > 600) throw new Error("the stages did not finish their deliveries within 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
}

const count = (topic: string) => (bus.db.prepare("SELECT COUNT(*) AS n FROM bus_messages WHERE topic = ?").get(topic) as { n: number }).n;

describe("every stage's message delivered twice", () => {
  it("ends ready with each chunk stored once, every chunk embedded once and one chunks.embedded", async () => {
    const { knowledgeBase } = await client.createKnowledgeBase({ name: "twice", chunking: { chunkSize: 24, chunkOverlap: 0 } });
    const text = Array.from({ length: 8 }, (_, i) => `Section ${i}: the expense policy pays claims of type ${i} within ${i + 3} days of approval.`).join("\n\n");
    const { document } = await client.uploadDocument({ header: { knowledgeBase: knowledgeBase!.id, fileName: "policy.txt", mimeType: "text/plain" }, content: new TextEncoder().encode(text) });
    let current = document!;
    for (let i = 0; current.status !== DocumentStatus.READY; i++) {
      expect(current.status, current.errorMessage).not.toBe(DocumentStatus.FAILED);
      if (i > 600) throw new Error(`not ready within 60 s: ${DocumentStatus[current.status]}`);
      await new Promise((r) => setTimeout(r, 100));
      current = (await client.getDocument({ documentId: document!.id })).document!;
    }
    await settled();
    expect(current.chunkCount).toBeGreaterThan(3);

    // Each stage did get every message twice: two parses, so two documents.parsed, so four chunkings.
    expect(count(Topics.documentsParsed)).toBe(2);
    expect(count(Topics.chunksCreated)).toBe(4);
    // Of four chunks.created (eight deliveries) one was embedded and published.
    expect(count(Topics.chunksEmbedded)).toBe(1);
    const embedded = stub.requests.filter((r) => r.path === "/v1/embeddings").flatMap((r) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]) as string[]);
    expect(new Set(embedded).size).toBe(embedded.length);
    expect(embedded.length).toBeGreaterThanOrEqual(current.chunkCount);

    const positions = Array.from({ length: current.chunkCount * 2 }, (_, index) => ({ documentId: document!.id, index, knowledgeBaseId: knowledgeBase!.id }));
    const stored = (await index.getChunks({ positions })).chunks;
    expect(stored.map((c) => c.index)).toEqual(Array.from({ length: current.chunkCount }, (_, i) => i));
  }, 120_000);
});
