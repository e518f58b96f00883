// Keys, roles and tenants on a whole Quarry, over the real gateway: with QUARRY_API_KEY set nothing
// answers without a key (HTTP 401 over Connect) except gRPC health and reflection; roles limit what
// a key may do; and a key limited to one knowledge base is refused every RPC that names another
// one or its documents — checked for every method of the public service, table-driven over the
// service descriptor, so a new RPC without a probe (and a rule) fails here. Runs on the SQLite
// catalog and, when OPENSEARCH_URL is set, on the OpenSearch catalog.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient, type QuarryClient } from "../../client/gateway-client.ts";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.ts";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { ACCESS_RULES, type MethodName } from "../../gateway/access/access-rules.ts";
import type { Env } from "../../lib/config.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { engineAddress } from "../support/engines.ts";
import { startEmbeddedQuarry, transportFor, type EmbeddedQuarryFixture, type Protocol } from "../support/embedded-quarry.ts";

async function codeOf(call: () => Promise<unknown>): Promise<Code | "ok"> {
  try {
    await call();
    return "ok";
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

const drain = async (stream: AsyncIterable<unknown>, first = false) => {
  for await (const _ of stream) if (first) break;
};

interface Tenant {
  id: string;
  name: string;
  docId: string;
  /** An assistant over this base alone, a conversation held with it and that conversation's turn. */
  assistant: string;
  conversationId: string;
  turnId: string;
}

interface World {
  a: Tenant;
  b: Tenant;
}

/**
 * One probe per public method: `other` names the other tenant's knowledge base or document (a key
 * limited to A must get PERMISSION_DENIED), `own` does the same on A (it must not be refused).
 */
type Probe = { other: (c: QuarryClient, w: World) => Promise<unknown>; own: (c: QuarryClient, w: World) => Promise<unknown>; destructive?: number };

const text = (s: string) => new TextEncoder().encode(s);

/** A chunk of a tenant's document, once its ingestion (or a re-ingest) has indexed it. */
async function chunkIdOf(c: QuarryClient, tenant: Tenant): Promise<string> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    const hit = (await c.search({ query: "secret", knowledgeBases: [tenant.id] })).hits.find((h) => h.chunk?.documentId === tenant.docId);
    if (hit) return hit.chunk!.id;
  }
  throw new Error(`${tenant.name}'s document was never searchable`);
}
const ownChunkId = (c: QuarryClient, w: World) => chunkIdOf(c, w.a);

const sourceFolders: string[] = [];
const emptyFolder = async () => {
  const folder = await mkdtemp(join(tmpdir(), "quarry-access-source-"));
  sourceFolders.push(folder);
  return folder;
};
// After every suite's own afterAll has stopped its Quarry (file-level hooks run last).
afterAll(() => Promise.all(sourceFolders.map((folder) => rm(folder, { recursive: true, force: true }))));
/** A source of tenant A over an empty folder (syncing it submits nothing), by name. */
async function ownSource(c: QuarryClient, w: World): Promise<string> {
  const name = `own-${randomBytes(3).toString("hex")}`;
  await c.addSource({ knowledgeBase: w.a.name, source: { name, kind: { case: "folder", value: { path: await emptyFolder() } } } });
  return name;
}

const PROBES: Record<string, Probe> = {
  createKnowledgeBase: { other: (c) => c.createKnowledgeBase({ name: `new-${randomBytes(3).toString("hex")}` }), own: async () => "a scoped key creates nothing" },
  getKnowledgeBase: { other: (c, w) => c.getKnowledgeBase({ knowledgeBase: w.b.name }), own: (c, w) => c.getKnowledgeBase({ knowledgeBase: w.a.name }) },
  listKnowledgeBases: { other: async () => "filtered, checked separately", own: (c) => c.listKnowledgeBases({}) },
  deleteKnowledgeBase: { other: (c, w) => c.deleteKnowledgeBase({ knowledgeBase: w.b.id }), own: (c, w) => c.deleteKnowledgeBase({ knowledgeBase: w.a.id }), destructive: 2 },
  // The other tenant's: a model no catalog has, so even a leak could change nothing; access is decided first.
  changeEmbeddingModel: {
    other: (c, w) => c.changeEmbeddingModel({ knowledgeBase: w.b.name, embeddingModel: "no-such-model" }),
    own: (c, w) => c.changeEmbeddingModel({ knowledgeBase: w.a.name, embeddingModel: "bge-small-en-v1.5" }),
  },
  watchModelChange: {
    other: (c, w) => drain(c.watchModelChange({ knowledgeBase: w.b.name }, { signal: AbortSignal.timeout(30_000) }), true),
    own: (c, w) => drain(c.watchModelChange({ knowledgeBase: w.a.name }, { signal: AbortSignal.timeout(30_000) }), true),
  },
  updateKnowledgeBase: {
    other: (c, w) => c.updateKnowledgeBase({ knowledgeBase: w.b.name, description: "intruded" }),
    own: (c, w) => c.updateKnowledgeBase({ knowledgeBase: w.a.name, description: "edited by its own editor" }),
  },
  reingestKnowledgeBase: { other: (c, w) => c.reingestKnowledgeBase({ knowledgeBase: w.b.id }), own: (c, w) => c.reingestKnowledgeBase({ knowledgeBase: w.a.id }) },
  reingestDocument: { other: (c, w) => c.reingestDocument({ documentId: w.b.docId }), own: (c, w) => c.reingestDocument({ documentId: w.a.docId }) },
  uploadDocument: {
    other: (c, w) => c.uploadDocument({ header: { knowledgeBase: w.b.name, fileName: "x.txt" }, content: text("intruder") }),
    own: (c, w) => c.uploadDocument({ header: { knowledgeBase: w.a.name, fileName: "own.txt" }, content: text("mine") }),
  },
  uploadDocumentStream: {
    other: (c, w) =>
      c.uploadDocumentStream(
        (async function* () {
          yield { part: { case: "header" as const, value: { knowledgeBase: w.b.id, fileName: "x.txt" } } };
          yield { part: { case: "content" as const, value: text("intruder") } };
        })(),
      ),
    own: (c, w) =>
      c.uploadDocumentStream(
        (async function* () {
          yield { part: { case: "header" as const, value: { knowledgeBase: w.a.id, fileName: "own-stream.txt" } } };
          yield { part: { case: "content" as const, value: text("mine, streamed") } };
        })(),
      ),
  },
  getDocument: { other: (c, w) => c.getDocument({ documentId: w.b.docId }), own: (c, w) => c.getDocument({ documentId: w.a.docId }) },
  exportKnowledgeBase: {
    other: (c, w) => drain(c.exportKnowledgeBase({ knowledgeBase: w.b.name }), true),
    own: (c, w) => drain(c.exportKnowledgeBase({ knowledgeBase: w.a.name }), true),
  },
  // An import makes a base, which no scope holds: refused before the archive is read.
  importKnowledgeBase: { other: (c) => c.importKnowledgeBase({ options: { name: "imported" }, archive: text("not read") }), own: async () => "a scoped key imports nothing" },
  importKnowledgeBaseStream: {
    other: (c) =>
      c.importKnowledgeBaseStream(
        (async function* () {
          yield { part: { case: "options" as const, value: { name: "imported" } } };
          yield { part: { case: "data" as const, value: text("not read") } };
        })(),
      ),
    own: async () => "a scoped key imports nothing",
  },
  // The other tenant's document is refused before its chunk is looked up; the own call needs a real chunk.
  getChunkNeighbours: {
    other: (c, w) => c.getChunkNeighbours({ documentId: w.b.docId, chunkId: "any-chunk" }),
    own: async (c, w) => c.getChunkNeighbours({ documentId: w.a.docId, chunkId: await ownChunkId(c, w) }),
  },
  listDocuments: { other: (c, w) => c.listDocuments({ knowledgeBase: w.b.name }), own: (c, w) => c.listDocuments({ knowledgeBase: w.a.name }) },
  // Chunk edits name the document; the other tenant's is refused before its chunk is looked up.
  listDocumentChunks: { other: (c, w) => c.listDocumentChunks({ documentId: w.b.docId }), own: (c, w) => c.listDocumentChunks({ documentId: w.a.docId, query: "secret" }) },
  editChunk: {
    other: (c, w) => c.editChunk({ documentId: w.b.docId, chunkId: "any-chunk", text: "intruded" }),
    own: async (c, w) => c.editChunk({ documentId: w.a.docId, chunkId: await ownChunkId(c, w), text: "the tenant-a secret is 42, checked by its own editor" }),
  },
  setChunkEnabled: {
    other: (c, w) => c.setChunkEnabled({ documentId: w.b.docId, chunkId: "any-chunk", enabled: false }),
    own: async (c, w) => c.setChunkEnabled({ documentId: w.a.docId, chunkId: await ownChunkId(c, w), enabled: true }),
  },
  addChunk: { other: (c, w) => c.addChunk({ documentId: w.b.docId, text: "intruded" }), own: (c, w) => c.addChunk({ documentId: w.a.docId, text: "a note on the secret, written by hand" }) },
  setDocumentEnabled: { other: (c, w) => c.setDocumentEnabled({ documentId: w.b.docId, enabled: false }), own: (c, w) => c.setDocumentEnabled({ documentId: w.a.docId, enabled: true }) },
  deleteDocument: { other: (c, w) => c.deleteDocument({ documentId: w.b.docId }), own: (c, w) => c.deleteDocument({ documentId: w.a.docId }), destructive: 1 },
  watchIngestion: {
    other: (c, w) => drain(c.watchIngestion({ knowledgeBase: w.b.name }, { signal: AbortSignal.timeout(30_000) }), true),
    own: (c, w) => drain(c.watchIngestion({ knowledgeBase: w.a.name }, { signal: AbortSignal.timeout(30_000) }), true),
  },
  previewChunks: {
    other: (c, w) => c.previewChunks({ fileName: "p.txt", content: text("preview me"), knowledgeBase: w.b.name }),
    own: (c, w) => c.previewChunks({ fileName: "p.txt", content: text("preview me"), knowledgeBase: w.a.name }),
  },
  listReadableFormats: { other: async () => "names no base", own: (c) => c.listReadableFormats({}) },
  listEmbeddingModels: { other: async () => "names no base", own: (c) => c.listEmbeddingModels({}) },
  getCaller: { other: async () => "names no base: a key learns only itself", own: (c) => c.getCaller({}) },
  // Sources name their base: another tenant's source is behind its base's scope.
  addSource: {
    other: (c, w) => c.addSource({ knowledgeBase: w.b.name, source: { name: "docs", kind: { case: "folder", value: { path: tmpdir() } } } }),
    own: async (c, w) => c.addSource({ knowledgeBase: w.a.name, source: { name: `own-${randomBytes(3).toString("hex")}`, kind: { case: "folder", value: { path: await emptyFolder() } } } }),
  },
  listSources: { other: (c, w) => c.listSources({ knowledgeBase: w.b.id }), own: (c, w) => c.listSources({ knowledgeBase: w.a.id }) },
  syncSource: { other: (c, w) => c.syncSource({ knowledgeBase: w.b.name, source: "docs" }), own: async (c, w) => c.syncSource({ knowledgeBase: w.a.name, source: await ownSource(c, w) }) },
  watchSourceSync: {
    other: (c, w) => drain(c.watchSourceSync({ knowledgeBase: w.b.name, source: "docs" }, { signal: AbortSignal.timeout(30_000) })),
    own: async (c, w) => drain(c.watchSourceSync({ knowledgeBase: w.a.name, source: await ownSource(c, w) }, { signal: AbortSignal.timeout(30_000) })),
  },
  removeSource: { other: (c, w) => c.removeSource({ knowledgeBase: w.b.name, source: "docs" }), own: async (c, w) => c.removeSource({ knowledgeBase: w.a.name, source: await ownSource(c, w) }) },
  search: { other: (c, w) => c.search({ query: "secret", knowledgeBases: [w.a.id, w.b.name] }), own: (c, w) => c.search({ query: "secret", knowledgeBases: [w.a.name] }) },
  chat: {
    other: (c, w) => drain(c.chat({ question: "what is secret?", knowledgeBases: [w.b.id] })),
    own: (c, w) => drain(c.chat({ question: "what is secret?", knowledgeBases: [w.a.id] })),
  },
  createApiKey: { other: (c) => c.createApiKey({ name: "escalate", role: ApiKeyRole.ADMIN }), own: async () => "a scoped key manages no keys" },
  listApiKeys: { other: (c) => c.listApiKeys({}), own: async () => "a scoped key manages no keys" },
  revokeApiKey: { other: (c) => c.revokeApiKey({ apiKey: "tenant-a-editor" }), own: async () => "a scoped key manages no keys" },
  getSystemStatus: { other: (c) => c.getSystemStatus({}), own: async () => "a scoped key sees no system status" },
  redriveDeadLetters: { other: (c) => c.redriveDeadLetters({ all: true }), own: async () => "a scoped key re-drives nothing" },
  createAssistant: {
    other: (c, w) => c.createAssistant({ assistant: { name: `other-${randomBytes(3).toString("hex")}`, knowledgeBases: [{ knowledgeBase: w.a.id }, { knowledgeBase: w.b.id }] } }),
    own: async () => "a scoped key names no assistant",
  },
  getAssistant: { other: (c, w) => c.getAssistant({ assistant: w.b.assistant }), own: (c, w) => c.getAssistant({ assistant: w.a.assistant }) },
  listAssistants: { other: async () => "filtered, checked separately", own: (c) => c.listAssistants({}) },
  updateAssistant: {
    other: (c, w) => c.updateAssistant({ assistant: w.b.assistant, update: { name: w.b.assistant, knowledgeBases: [{ knowledgeBase: w.a.id }] } }),
    own: (c, w) => c.updateAssistant({ assistant: w.a.assistant, update: { name: w.a.assistant, knowledgeBases: [{ knowledgeBase: w.a.id, topK: 3 }] } }),
  },
  deleteAssistant: { other: (c, w) => c.deleteAssistant({ assistant: w.b.assistant }), own: (c, w) => c.deleteAssistant({ assistant: w.a.assistant }), destructive: 1 },
  listConversations: { other: (c, w) => c.listConversations({ assistant: w.b.assistant }), own: (c) => c.listConversations({}) },
  getConversation: { other: (c, w) => c.getConversation({ conversationId: w.b.conversationId }), own: (c, w) => c.getConversation({ conversationId: w.a.conversationId }) },
  deleteConversation: {
    other: (c, w) => c.deleteConversation({ conversationId: w.b.conversationId }),
    own: (c, w) => c.deleteConversation({ conversationId: w.a.conversationId }),
    destructive: 1,
  },
  getTurn: { other: (c, w) => c.getTurn({ turnId: w.b.turnId }), own: (c, w) => c.getTurn({ turnId: w.a.turnId }) },
  // Publishing makes the assistant's corrections base, which no scope covers: unscoped keys only.
  correctAnswer: { other: (c, w) => c.correctAnswer({ turnId: w.b.turnId, correctedAnswer: "intruder" }), own: async () => "a scoped key publishes no correction" },
  listCorrections: { other: (c, w) => c.listCorrections({ assistant: w.b.assistant }), own: (c, w) => c.listCorrections({ assistant: w.a.assistant }) },
  deleteCorrection: { other: (c, w) => c.deleteCorrection({ correctionId: w.b.docId }), own: async () => "a scoped key deletes no correction" },
  debugRetrieval: {
    other: (c, w) => c.debugRetrieval({ turnId: w.b.turnId, expect: { text: "secret" } }),
    own: (c, w) => c.debugRetrieval({ turnId: w.a.turnId, expect: { text: "secret" } }),
  },
};

function describeAccessControl(backend: string, backendEnv: () => Env, cleanup: () => Promise<void> = async () => {}) {
  describe(`access control on the ${backend} catalog`, () => {
    const bootstrap = `bootstrap-${randomBytes(16).toString("hex")}`;
    let quarry: EmbeddedQuarryFixture;
    let admin: QuarryClient;
    let world: World;
    const keys: Record<string, string> = {};

    beforeAll(async () => {
      quarry = await startEmbeddedQuarry({ env: { ...backendEnv(), QUARRY_API_KEY: bootstrap } });
      admin = gatewayClient(quarry.url, bootstrap);
      const make = async (name: string) => {
        const kb = (await admin.createKnowledgeBase({ name: `${name}-${randomBytes(3).toString("hex")}` })).knowledgeBase!;
        const doc = (await admin.uploadDocument({ header: { knowledgeBase: kb.id, fileName: "secret.txt" }, content: text(`the ${name} secret is 42`) })).document!;
        await admin.addSource({ knowledgeBase: kb.id, source: { name: "docs", kind: { case: "folder", value: { path: await emptyFolder() } } } });
        const assistant = (await admin.createAssistant({ assistant: { name: `${name}-assistant-${randomBytes(3).toString("hex")}`, knowledgeBases: [{ knowledgeBase: kb.id }] } }))
          .assistant!.name;
        let conversationId = "";
        let turnId = "";
        for await (const { event } of admin.chat({ question: "what is secret?", assistant })) {
          if (event?.event.case === "started") ({ conversationId, turnId } = event.event.value);
        }
        return { id: kb.id, name: kb.name, docId: doc.id, assistant, conversationId, turnId };
      };
      world = { a: await make("tenant-a"), b: await make("tenant-b") };
      const create = async (name: string, role: ApiKeyRole, kbs: string[] = []) => {
        const res = await admin.createApiKey({ name, role, knowledgeBases: kbs });
        keys[name] = res.secret;
        return res;
      };
      await create("reader", ApiKeyRole.READER);
      await create("editor", ApiKeyRole.EDITOR);
      await create("tenant-a-editor", ApiKeyRole.EDITOR, [world.a.name]);
      await create("tenant-a-reader", ApiKeyRole.READER, [world.a.id]);
    }, 120_000);
    afterAll(async () => {
      await quarry?.stop();
      await cleanup();
    });

    it("answers nothing without a key (HTTP 401 over Connect), whatever the protocol, but health and reflection", async () => {
      const res = await fetch(`${quarry.url}/quarry.gateway.v1.QuarryService/ListKnowledgeBases`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe("unauthenticated");
      for (const protocol of ["connect", "grpc", "grpc-web"] as const) {
        expect(await codeOf(() => quarry.clientFor(protocol).listKnowledgeBases({})), protocol).toBe(Code.Unauthenticated);
        expect(await codeOf(() => quarry.clientFor(protocol).deleteKnowledgeBase({ knowledgeBase: world.a.id })), protocol).toBe(Code.Unauthenticated);
      }
      const health = createClient(Health, createGrpcTransport({ baseUrl: quarry.url }));
      expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const reflection = createClient(ServerReflection, createGrpcTransport({ baseUrl: quarry.url }));
      for await (const r of reflection.serverReflectionInfo((async function* () { yield { messageRequest: { case: "listServices" as const, value: "" } }; })())) {
        expect(r.messageResponse.case).toBe("listServicesResponse");
      }
      // The knowledge base is still there.
      expect((await admin.getKnowledgeBase({ knowledgeBase: world.a.id })).knowledgeBase?.id).toBe(world.a.id);
    });

    it("refuses a wrong or malformed key as unauthenticated, and takes a right one over Connect, gRPC and gRPC-Web", async () => {
      const wrong = `qk_${"0".repeat(16)}_${randomBytes(32).toString("base64url")}`;
      for (const presented of [wrong, "not-a-quarry-key", `${keys.reader}x`]) {
        expect(await codeOf(() => gatewayClient(quarry.url, presented).listKnowledgeBases({}))).toBe(Code.Unauthenticated);
      }
      const basic = await fetch(`${quarry.url}/quarry.gateway.v1.QuarryService/ListKnowledgeBases`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Basic ${Buffer.from("a:b").toString("base64")}` },
        body: "{}",
      });
      expect(basic.status).toBe(401);
      for (const protocol of ["connect", "grpc", "grpc-web"] as const) {
        const client = createClient(QuarryService, transportFor(quarry.url, protocol));
        const listed = await client.listKnowledgeBases({}, { headers: { authorization: `Bearer ${keys.reader}` } });
        expect(listed.knowledgeBases.map((k) => k.id), protocol).toEqual(expect.arrayContaining([world.a.id, world.b.id]));
      }
    });

    it("lets each role do its own calls and nothing above them", async () => {
      const reader = gatewayClient(quarry.url, keys.reader);
      const editor = gatewayClient(quarry.url, keys.editor);
      expect(await codeOf(() => reader.getDocument({ documentId: world.b.docId }))).toBe("ok");
      expect(await codeOf(() => reader.search({ query: "secret", knowledgeBases: [world.a.id, world.b.id] }))).toBe("ok");
      expect(await codeOf(() => reader.uploadDocument({ header: { knowledgeBase: world.a.id, fileName: "r.txt" }, content: text("no") }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => reader.deleteDocument({ documentId: world.b.docId }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => reader.createKnowledgeBase({ name: "by-a-reader" }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => reader.updateKnowledgeBase({ knowledgeBase: world.a.id, description: "by a reader" }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => reader.reingestDocument({ documentId: world.b.docId }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => reader.listDocumentChunks({ documentId: world.b.docId }))).toBe("ok");
      expect(await codeOf(() => reader.editChunk({ documentId: world.b.docId, chunkId: "any-chunk", text: "by a reader" }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => reader.setChunkEnabled({ documentId: world.b.docId, chunkId: "any-chunk", enabled: false }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => reader.addChunk({ documentId: world.b.docId, text: "by a reader" }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => drain(reader.watchModelChange({ knowledgeBase: world.a.id }), true))).toBe("ok");
      expect(await codeOf(() => reader.listApiKeys({}))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => editor.uploadDocument({ header: { knowledgeBase: world.b.id, fileName: "e.txt" }, content: text("edited") }))).toBe("ok");
      expect(await codeOf(() => editor.createApiKey({ name: "by-an-editor", role: ApiKeyRole.READER }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => editor.revokeApiKey({ apiKey: "reader" }))).toBe(Code.PermissionDenied);
      const editorKb = (await editor.createKnowledgeBase({ name: `by-an-editor-${randomBytes(3).toString("hex")}` })).knowledgeBase!;
      expect(await codeOf(() => editor.deleteKnowledgeBase({ knowledgeBase: editorKb.id }))).toBe("ok");
    });

    it("lets an unscoped editor correct an answer, recording its key's name, and keeps readers and scoped keys from it", async () => {
      const editor = gatewayClient(quarry.url, keys.editor);
      const correction = (await editor.correctAnswer({ turnId: world.a.turnId, correctedAnswer: "The tenant-a secret is 43." })).correction!;
      expect(correction.author).toBe("editor");
      expect((await gatewayClient(quarry.url, keys["tenant-a-reader"]).listCorrections({ assistant: world.a.assistant })).corrections.map((c) => c.author)).toEqual(["editor"]);
      expect(await codeOf(() => gatewayClient(quarry.url, keys.reader).correctAnswer({ turnId: world.a.turnId, correctedAnswer: "no" }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => gatewayClient(quarry.url, keys["tenant-a-editor"]).deleteCorrection({ correctionId: correction.id }))).toBe(Code.PermissionDenied);
      expect(await codeOf(() => editor.deleteCorrection({ correctionId: correction.id }))).toBe("ok");
      // Deleting the assistant deletes its corrections base, which no scope covers: not a scoped key's
      // call, even for an assistant in its scope. (world.a.assistant is deleted by the scoped editor
      // below, so a base of its own stops that; an unscoped editor deletes it first, with the base.)
      const scopedDelete = await gatewayClient(quarry.url, keys["tenant-a-editor"])
        .deleteAssistant({ assistant: world.a.assistant })
        .then(() => undefined, (error: unknown) => ConnectError.from(error));
      expect(scopedDelete?.code).toBe(Code.PermissionDenied);
      expect(scopedDelete?.rawMessage).toMatch(/has managed corrections, and deleting it deletes their knowledge base, which no key's scope covers/);
      const deleted = await editor.deleteAssistant({ assistant: world.a.assistant });
      expect(deleted.correctionsKnowledgeBaseId).toBe(correction.knowledgeBaseId);
      expect(await codeOf(() => admin.getKnowledgeBase({ knowledgeBase: correction.knowledgeBaseId }))).toBe(Code.NotFound);
      world.a.assistant = (await admin.createAssistant({ assistant: { name: `${world.a.name}-assistant-again`, knowledgeBases: [{ knowledgeBase: world.a.id }] } })).assistant!.name;
    });

    it("has a probe for every public method (a new RPC needs a probe here and a rule in access-rules.ts)", () => {
      expect(Object.keys(PROBES).sort()).toEqual(QuarryService.methods.map((m) => m.localName).sort());
    });

    it("keeps a key limited to one knowledge base out of every other base and its documents, for every public method", async () => {
      for (const name of ["tenant-a-editor", "tenant-a-reader"]) {
        const scoped = gatewayClient(quarry.url, keys[name]);
        for (const method of QuarryService.methods) {
          const code = await codeOf(() => PROBES[method.localName].other(scoped, world));
          if (["listKnowledgeBases", "listAssistants", "listReadableFormats", "listEmbeddingModels", "getCaller"].includes(method.localName)) continue;
          // A call no scoped key may make is refused; what the other tenant holds does not exist for it.
          const rule = ACCESS_RULES[method.localName as MethodName];
          const refused = rule.scoped === "deny" || (name === "tenant-a-reader" && rule.role !== "reader");
          const expected = refused ? Code.PermissionDenied : Code.NotFound;
          expect(code, `${name} calling ${method.name} on the other tenant`).toBe(expected);
        }
        // Listing shows only its own base; a base that does not exist is refused like a foreign one.
        expect((await scoped.listKnowledgeBases({})).knowledgeBases.map((k) => k.id)).toEqual([world.a.id]);
        // Assistants and conversations: only those whose every base is in scope.
        expect((await scoped.listAssistants({})).assistants.map((a) => a.name)).not.toContain(world.b.assistant);
        expect((await scoped.listAssistants({})).assistants.map((a) => a.name)).toContain(world.a.assistant);
        const conversations = (await scoped.listConversations({})).conversations.map((c) => c.id);
        expect(conversations).toContain(world.a.conversationId);
        expect(conversations).not.toContain(world.b.conversationId);
        expect(await codeOf(() => drain(scoped.chat({ question: "what is secret?", assistant: world.b.assistant })))).toBe(Code.NotFound);
        expect(await codeOf(() => drain(scoped.chat({ question: "and then?", conversationId: world.b.conversationId })))).toBe(Code.NotFound);
        expect(await codeOf(() => scoped.getKnowledgeBase({ knowledgeBase: "no-such-base" }))).toBe(Code.NotFound);
        // Naming no base could mean every base: refused outright rather than left to the services.
        expect(await codeOf(() => scoped.search({ query: "secret", knowledgeBases: [] }))).toBe(Code.PermissionDenied);
        expect(await codeOf(() => drain(scoped.chat({ question: "what is secret?", knowledgeBases: [] })))).toBe(Code.PermissionDenied);
        expect(await codeOf(() => scoped.getDocument({ documentId: "doc_00000000000000000000000000000000" }))).toBe(Code.NotFound);
        // Debugging its own base for the other tenant's document, or the other base by name, is refused too.
        expect(await codeOf(() => scoped.debugRetrieval({ query: "secret", knowledgeBases: [world.a.id], expect: { documentId: world.b.docId } }))).toBe(Code.NotFound);
        expect(await codeOf(() => scoped.debugRetrieval({ query: "secret", knowledgeBases: [world.b.name], expect: { text: "secret" } }))).toBe(Code.NotFound);
      }
      // Nothing of B changed.
      expect((await admin.getDocument({ documentId: world.b.docId })).document?.enabled).toBe(true);
      expect((await admin.getKnowledgeBase({ knowledgeBase: world.b.id })).knowledgeBase?.description).not.toBe("intruded");
      expect((await admin.listDocuments({ knowledgeBase: world.b.id })).documents.map((d) => d.fileName)).not.toContain("x.txt");
    });

    it("answers an id from a base the key cannot see exactly as an id that does not exist, for every RPC that takes one", async () => {
      const otherChunk = await chunkIdOf(admin, world.b);
      const ownDoc = world.a.docId;
      // Each row names one object of tenant B by its id; `id` is where the id goes.
      const ID_PROBES: { rpc: string; unseen: string; call: (c: QuarryClient, id: string) => Promise<unknown> }[] = [
        { rpc: "GetKnowledgeBase", unseen: world.b.id, call: (c, id) => c.getKnowledgeBase({ knowledgeBase: id }) },
        { rpc: "GetDocument", unseen: world.b.docId, call: (c, id) => c.getDocument({ documentId: id }) },
        { rpc: "SetDocumentEnabled", unseen: world.b.docId, call: (c, id) => c.setDocumentEnabled({ documentId: id, enabled: true }) },
        { rpc: "ReingestDocument", unseen: world.b.docId, call: (c, id) => c.reingestDocument({ documentId: id }) },
        { rpc: "WatchIngestion", unseen: world.b.docId, call: (c, id) => drain(c.watchIngestion({ documentIds: [id] }), true) },
        { rpc: "GetChunkNeighbours (chunk)", unseen: otherChunk, call: (c, id) => c.getChunkNeighbours({ documentId: ownDoc, chunkId: id }) },
        { rpc: "DebugRetrieval (expect.chunk_id)", unseen: otherChunk, call: (c, id) => c.debugRetrieval({ query: "secret", knowledgeBases: [world.a.id], expect: { chunkId: id } }) },
        { rpc: "DebugRetrieval (expect.document_id)", unseen: world.b.docId, call: (c, id) => c.debugRetrieval({ query: "secret", knowledgeBases: [world.a.id], expect: { documentId: id } }) },
        { rpc: "DebugRetrieval (turn)", unseen: world.b.turnId, call: (c, id) => c.debugRetrieval({ turnId: id }) },
        { rpc: "GetAssistant", unseen: world.b.assistant, call: (c, id) => c.getAssistant({ assistant: id }) },
        { rpc: "ListCorrections", unseen: world.b.assistant, call: (c, id) => c.listCorrections({ assistant: id }) },
        { rpc: "ListConversations", unseen: world.b.assistant, call: (c, id) => c.listConversations({ assistant: id }) },
        { rpc: "GetConversation", unseen: world.b.conversationId, call: (c, id) => c.getConversation({ conversationId: id }) },
        { rpc: "DeleteConversation", unseen: world.b.conversationId, call: (c, id) => c.deleteConversation({ conversationId: id }) },
        { rpc: "Chat (conversation)", unseen: world.b.conversationId, call: (c, id) => drain(c.chat({ question: "and then?", conversationId: id })) },
        { rpc: "GetTurn", unseen: world.b.turnId, call: (c, id) => c.getTurn({ turnId: id }) },
      ];
      const answer = (call: () => Promise<unknown>) =>
        call().then(
          () => ({ code: "ok" as const, message: "" }),
          (error: unknown) => ({ code: ConnectError.from(error).code, message: ConnectError.from(error).rawMessage }),
        );
      const missing = `nothing-${randomBytes(6).toString("hex")}`;
      for (const name of ["tenant-a-editor", "tenant-a-reader"]) {
        const scoped = gatewayClient(quarry.url, keys[name]);
        for (const probe of ID_PROBES) {
          const unseen = await answer(() => probe.call(scoped, probe.unseen));
          const absent = await answer(() => probe.call(scoped, missing));
          // A reader is refused writes before any look-up, which reveals nothing either.
          expect(unseen.code, `${name}: ${probe.rpc} with tenant B's id`).toBe(unseen.message.includes("role") ? Code.PermissionDenied : Code.NotFound);
          expect(unseen.message.replace(probe.unseen, "<id>"), `${name}: ${probe.rpc}`).toBe(absent.message.replace(missing, "<id>"));
        }
      }
      // The case issue 23 quoted: the chunk's base is not named in the answer.
      const leak = await answer(() => ID_PROBES[6].call(gatewayClient(quarry.url, keys["tenant-a-reader"]), otherChunk));
      expect(leak.message).not.toContain(world.b.id);
      // The same chunk for an unscoped reader still says where it is (its key may see it).
      const open = await gatewayClient(quarry.url, keys.editor).debugRetrieval({ query: "secret", knowledgeBases: [world.a.id], expect: { chunkId: otherChunk } });
      expect(open.report?.existenceNote).toContain(world.b.id);
    });

    it("answers a scoped key's new name the same whether another tenant holds it or nobody does", async () => {
      const scoped = gatewayClient(quarry.url, keys["tenant-a-editor"]);
      const answer = (call: () => Promise<unknown>) =>
        call().then(
          () => ({ code: "ok" as const, message: "" }),
          (error: unknown) => ({ code: ConnectError.from(error).code, message: ConnectError.from(error).rawMessage }),
        );
      const free = `free-${randomBytes(4).toString("hex")}`;
      // Renaming its own base: to tenant B's name (taken, by a base it cannot see) and to a free name.
      const taken = await answer(() => scoped.updateKnowledgeBase({ knowledgeBase: world.a.id, name: world.b.name }));
      const untaken = await answer(() => scoped.updateKnowledgeBase({ knowledgeBase: world.a.id, name: free }));
      expect(taken.code).toBe(Code.PermissionDenied);
      expect(taken).toEqual(untaken);
      expect(taken.message).not.toContain(world.b.name);
      // The same for its assistant, and creating one is refused before any name is looked at.
      const current = (await scoped.getAssistant({ assistant: world.a.assistant })).assistant!;
      const renamedTaken = await answer(() => scoped.updateAssistant({ assistant: current.id, update: { ...current, name: world.b.assistant } }));
      const renamedFree = await answer(() => scoped.updateAssistant({ assistant: current.id, update: { ...current, name: free } }));
      expect(renamedTaken.code).toBe(Code.PermissionDenied);
      expect(renamedTaken).toEqual(renamedFree);
      const created = await answer(() => scoped.createAssistant({ assistant: { name: world.b.assistant, knowledgeBases: [{ knowledgeBase: world.a.id }] } }));
      expect(created).toEqual(await answer(() => scoped.createAssistant({ assistant: { name: free, knowledgeBases: [{ knowledgeBase: world.a.id }] } })));
      expect(created.code).toBe(Code.PermissionDenied);
      // Keeping the name (an update sends the whole assistant back) and other edits still work.
      expect(await codeOf(() => scoped.updateAssistant({ assistant: current.id, update: { ...current, systemPrompt: "Answer briefly." } }))).toBe("ok");
      expect(await codeOf(() => scoped.updateKnowledgeBase({ knowledgeBase: world.a.id, name: world.a.name, description: "kept its name" }))).toBe("ok");
      // An unscoped editor still learns that a name is taken: it may see every base.
      expect(await codeOf(() => gatewayClient(quarry.url, keys.editor).updateKnowledgeBase({ knowledgeBase: world.a.id, name: world.b.name }))).toBe(Code.AlreadyExists);
      expect((await admin.getKnowledgeBase({ knowledgeBase: world.a.id })).knowledgeBase?.name).toBe(world.a.name);
    });

    it("lets the scoped editor do each of those calls on its own knowledge base", async () => {
      const scoped = gatewayClient(quarry.url, keys["tenant-a-editor"]);
      // Deletions last: the document, then the knowledge base.
      const ordered = [...QuarryService.methods].sort((x, y) => (PROBES[x.localName].destructive ?? 0) - (PROBES[y.localName].destructive ?? 0));
      for (const method of ordered) {
        const code = await codeOf(() => PROBES[method.localName].own(scoped, world));
        expect(code, `tenant-a-editor calling ${method.name} on its own base`).toBe("ok");
      }
      // The scoped reader may read but not write its own base.
      const reader = gatewayClient(quarry.url, keys["tenant-a-reader"]);
      expect(await codeOf(() => reader.uploadDocument({ header: { knowledgeBase: world.a.id, fileName: "r.txt" }, content: text("no") }))).toBe(Code.PermissionDenied);
    });

    it("lists keys without secrets, refuses a scoped admin key, and stops a revoked key at once", async () => {
      const listed = (await admin.listApiKeys({})).apiKeys;
      expect(listed.map((k) => k.name)).toEqual(expect.arrayContaining(["reader", "editor", "tenant-a-editor", "tenant-a-reader"]));
      expect(JSON.stringify(listed, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(keys.reader.slice(20));
      expect(listed.find((k) => k.name === "tenant-a-reader")?.knowledgeBaseIds).toEqual([world.a.id]);
      expect(await codeOf(() => admin.createApiKey({ name: "scoped-admin", role: ApiKeyRole.ADMIN, knowledgeBases: [world.b.id] }))).toBe(Code.InvalidArgument);
      expect(await codeOf(() => admin.createApiKey({ name: "reader", role: ApiKeyRole.READER }))).toBe(Code.AlreadyExists);
      expect(await codeOf(() => admin.createApiKey({ name: "no-role" }))).toBe(Code.InvalidArgument);
      const reader = gatewayClient(quarry.url, keys.reader);
      expect(await codeOf(() => reader.listKnowledgeBases({}))).toBe("ok");
      await admin.revokeApiKey({ apiKey: "reader" });
      expect(await codeOf(() => reader.listKnowledgeBases({}))).toBe(Code.Unauthenticated);
      expect(await codeOf(() => admin.revokeApiKey({ apiKey: "reader" }))).toBe(Code.NotFound);
    });
  });
}

describeAccessControl("SQLite", () => ({}));

const opensearch = engineAddress("OPENSEARCH_URL");
if (opensearch) {
  const prefix = `quarry-access-${randomBytes(4).toString("hex")}`;
  describeAccessControl("OpenSearch", () => ({ OPENSEARCH_URL: opensearch, QUARRY_OPENSEARCH_PREFIX: prefix }), () => deleteOpenSearchNamespace(opensearch, `${prefix}-`));
} else {
  describe.skip("access control on the OpenSearch catalog (skipped: OPENSEARCH_URL not set)", () => {});
}
