// The public API's handlers through an in-memory router transport, with the real services behind
// them: every service assembled in this process as the embedded mode assembles it (one SQLite file
// in a temp folder, the installed local embedding model, the bus's workers running), only the
// socket left out. The gateway's own interceptors (access, error mapping) stay on the path.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { assembleInProcess } from "../app/embedded.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DocumentStatus, DocumentVectorMode, RetrievalMode } from "../gen/quarry/common/v1/common_pb.ts";
import { QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import { openBlobStore } from "../lib/blobs/blob-store-from-config.ts";
import { openEventBus } from "../lib/bus/bus-from-config.ts";
import type { EventBus, Subscription } from "../lib/bus/event-bus.ts";
import type { Env } from "../lib/config.ts";
import { silentLogger } from "../lib/logger.ts";
import { DEFAULT_MODEL } from "../lib/models/model-catalog.ts";
import { redriveSettings } from "../lib/pipeline/redrive.ts";
import { inProcessTransport } from "../lib/rpc/transports.ts";
import type { AssembledService } from "../lib/service-runtime.ts";
import { codeOf } from "../lib/rpc/testing/connect-code.ts";

let dir: string;
let bus: EventBus;
let services: AssembledService[];
let workers: Subscription[];
let client: Client<typeof QuarryService>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "quarry-gateway-routes-"));
  // From scratch, as test/support/embedded-quarry.ts does: only what locates the installed model is inherited.
  const env: Env = { QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR, HOME: process.env.HOME, QUARRY_DATA_DIR: dir, QUARRY_INSECURE: "1" };
  bus = await openEventBus(env, silentLogger);
  const shared = { bus, blobs: await openBlobStore(env), logger: silentLogger, redrive: redriveSettings(env) };
  const assembled = await assembleInProcess(env, shared);
  services = assembled.services;
  const gateway = assembled.gateway;
  workers = [];
  for (const service of services) workers.push(...(await service.startWorkers()));
  client = createClient(QuarryService, inProcessTransport(gateway.server.routes, gateway.server.interceptors));
}, 120_000);

afterAll(async () => {
  await Promise.all((workers ?? []).map((w) => w.close({ graceMs: 0 })));
  for (const service of [...(services ?? [])].reverse()) await service.close();
  await bus?.close({ graceMs: 0 });
  await rm(dir, { recursive: true, force: true });
});

const text = (s: string) => new TextEncoder().encode(s);

describe("gateway routes", () => {
  it("creates a knowledge base with the embedder's model and the chunker's settings, and finds it by name", async () => {
    const { knowledgeBase } = await client.createKnowledgeBase({ name: "handbook", description: "the staff handbook", chunking: { chunkSize: 200 } });
    expect(knowledgeBase).toMatchObject({ name: "handbook", description: "the staff handbook", embeddingModel: DEFAULT_MODEL, embeddingDimension: 384 });
    expect(knowledgeBase!.chunking).toMatchObject({ chunkSize: 200 });
    const found = (await client.getKnowledgeBase({ knowledgeBase: "handbook" })).knowledgeBase!;
    expect(found.id).toBe(knowledgeBase!.id);
    expect(found.chunking).toEqual(knowledgeBase!.chunking);
    expect((await client.listKnowledgeBases({})).knowledgeBases.map((kb) => kb.name)).toContain("handbook");
    expect(await codeOf(client.createKnowledgeBase({ name: "handbook" }))).toBe("AlreadyExists");
  });

  it("refuses a knowledge base for a model nothing can embed with, and creates nothing", async () => {
    expect(await codeOf(client.createKnowledgeBase({ name: "nomodel", embeddingModel: "no-such-model" }))).toBe("NotFound");
    expect(await codeOf(client.getKnowledgeBase({ knowledgeBase: "nomodel" }))).toBe("NotFound");
  });

  it("reports what does not exist as not found", async () => {
    expect(await codeOf(client.getKnowledgeBase({ knowledgeBase: "nope" }))).toBe("NotFound");
    expect(await codeOf(client.deleteKnowledgeBase({ knowledgeBase: "nope" }))).toBe("NotFound");
    expect(await codeOf(client.listDocuments({ knowledgeBase: "nope" }))).toBe("NotFound");
    expect(await codeOf(client.getDocument({ documentId: "doc_nope" }))).toBe("NotFound");
    expect(await codeOf(client.uploadDocument({ header: { knowledgeBase: "nope", fileName: "a.txt" }, content: text("hello") }))).toBe("NotFound");
    expect(await codeOf(client.search({ query: "hello", knowledgeBases: ["nope"] }))).toBe("NotFound");
  });

  it("refuses bad input as invalid argument", async () => {
    expect(await codeOf(client.uploadDocument({ content: text("hello") }))).toBe("InvalidArgument");
    expect(await codeOf(client.uploadDocument({ header: { knowledgeBase: "handbook", fileName: "empty.txt" }, content: new Uint8Array() }))).toBe("InvalidArgument");
    expect(await codeOf(client.previewChunks({ fileName: "empty.txt", content: new Uint8Array() }))).toBe("InvalidArgument");
    expect(await codeOf(client.search({ query: "   ", knowledgeBases: ["handbook"] }))).toBe("InvalidArgument");
    expect(await codeOf(client.search({ query: "hello", knowledgeBases: [] }))).toBe("InvalidArgument");
    const watch = (async () => {
      for await (const _ of client.watchIngestion({})) void _;
    })();
    expect(await codeOf(watch)).toBe("InvalidArgument");
  });

  it("previews a file's chunks with a knowledge base's settings, storing nothing", async () => {
    const preview = await client.previewChunks({ fileName: "notes.md", content: text("# Leave\n\nStaff take leave by asking their manager.\n"), knowledgeBase: "handbook" });
    expect(preview.settings).toMatchObject({ chunkSize: 200 });
    expect(preview.totalChunks).toBe(1);
    expect(preview.chunks[0].text).toContain("asking their manager");
    expect((await client.listDocuments({ knowledgeBase: "handbook" })).documents).toEqual([]);
  });

  it("previews whether a document would also be embedded whole, by the settings and its length", async () => {
    const short = text("# Leave\n\nStaff take leave by asking their manager.\n");
    const byDefault = await client.previewChunks({ fileName: "notes.md", content: short });
    expect([byDefault.settings!.documentVector, byDefault.documentVector]).toEqual([DocumentVectorMode.AUTO, true]);
    const preview = await client.previewChunks({ fileName: "notes.md", content: short, settings: { documentVector: DocumentVectorMode.AUTO } });
    expect(preview.settings!.documentVector).toBe(DocumentVectorMode.AUTO);
    expect(preview.documentVector).toBe(true);
    const off = await client.previewChunks({ fileName: "notes.md", content: short, settings: { documentVector: DocumentVectorMode.OFF } });
    expect([off.settings!.documentVector, off.documentVector]).toEqual([DocumentVectorMode.OFF, false]);
    const long = await client.previewChunks({ fileName: "long.txt", content: text(Array.from({ length: 120 }, (_, i) => `Sentence ${i} says something new.`).join(" ")), settings: { documentVector: DocumentVectorMode.AUTO } });
    expect(long.settings!.documentVector).toBe(DocumentVectorMode.AUTO);
    expect(long.totalTokens).toBeGreaterThan(600);
    expect(long.documentVector).toBe(false);
  });

  it("ingests an upload to ready, then searches and answers from it with citations, and deletes it", async () => {
    const content = text("Expense claims are paid on the fifteenth of each month.\n\nThe cafeteria opens at eight.\n");
    const { document } = await client.uploadDocument({ header: { knowledgeBase: "handbook", fileName: "policy.txt", mimeType: "text/plain" }, content });
    const seen: DocumentStatus[] = [];
    for await (const update of client.watchIngestion({ documentIds: [document!.id] }, { timeoutMs: 60_000 })) seen.push(update.status);
    expect(seen.at(-1)).toBe(DocumentStatus.READY);
    expect((await client.getDocument({ documentId: document!.id })).document).toMatchObject({ status: DocumentStatus.READY, fileName: "policy.txt" });

    const { hits } = await client.search({ query: "when are expense claims paid", knowledgeBases: ["handbook"], settings: { mode: RetrievalMode.HYBRID } });
    expect(hits[0].chunk!.text).toContain("fifteenth");

    const events = [];
    for await (const { event } of client.chat({ question: "When are expense claims paid?", knowledgeBases: ["handbook"] })) events.push(event!.event);
    expect(events.some((e) => e.case === "citation" && e.value.fileName === "policy.txt")).toBe(true);
    const final = events.at(-1)!;
    expect(final.case).toBe("final");
    expect(final.case === "final" && final.value.extractive).toBe(true);

    const disabled = await client.setDocumentEnabled({ documentId: document!.id, enabled: false });
    expect(disabled.document!.enabled).toBe(false);
    await client.deleteDocument({ documentId: document!.id });
    expect(await codeOf(client.getDocument({ documentId: document!.id }))).toBe("NotFound");
  }, 90_000);

  it("deletes a knowledge base by name", async () => {
    await client.createKnowledgeBase({ name: "scratch" });
    await client.deleteKnowledgeBase({ knowledgeBase: "scratch" });
    expect(await codeOf(client.getKnowledgeBase({ knowledgeBase: "scratch" }))).toBe("NotFound");
  });
});
