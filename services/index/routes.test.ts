// The index service's RPCs through an in-memory router transport (createRouterTransport) with the
// server's own interceptors, on a real SQLite index in a temp file: protobuf in, domain rules and
// stores behind, Connect codes out.
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueryRewriteMode } from "../../gen/quarry/common/v1/assistant_pb.ts";
import { RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import type { EmbeddedChunk } from "../../lib/domain.ts";
import { silentLogger } from "../../lib/logger.ts";
import { catalogModel } from "../../lib/models/model-catalog.ts";
import { AssistantRegistry } from "./assistants/assistant-registry.ts";
import { ConversationRegistry } from "./conversations/conversation-registry.ts";
import { SqliteAssistantStore } from "./sqlite/sqlite-assistant-store.ts";
import { SqliteConversationStore } from "./sqlite/sqlite-conversation-store.ts";
import { ApiKeyRegistry } from "./keys/api-key-registry.ts";
import { build } from "./server.ts";
import { SqliteApiKeyStore } from "./sqlite/sqlite-api-key-store.ts";
import { SqliteCatalog } from "./sqlite/sqlite-catalog.ts";
import { SqliteSearchEngine } from "./sqlite/sqlite-search-engine.ts";
import { openTestDatabase } from "./testing/sqlite-test-database.ts";

const DIM = 4;

async function codeOf(call: Promise<unknown>): Promise<Code> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  if (!error) throw new Error("the call succeeded; an error was expected");
  return error.code;
}

describe("index routes", () => {
  let cleanup: () => Promise<void>;
  let engine: SqliteSearchEngine;
  let client: Client<typeof IndexService>;

  beforeEach(() => {
    const database = openTestDatabase();
    const catalog = new SqliteCatalog(database.db);
    engine = new SqliteSearchEngine(database.db);
    const server = build({
      catalog,
      engine,
      apiKeys: new ApiKeyRegistry(new SqliteApiKeyStore(database.db), catalog),
      assistants: new AssistantRegistry(new SqliteAssistantStore(database.db), catalog),
      conversations: new ConversationRegistry(new SqliteConversationStore(database.db)),
      logger: silentLogger,
    });
    client = createClient(IndexService, createRouterTransport(server.routes, { router: { interceptors: server.interceptors } }));
    cleanup = async () => {
      await engine.close();
      await database.cleanup();
    };
  });
  afterEach(() => cleanup());

  async function createKb(name = "manuals") {
    const { knowledgeBase } = await client.createKnowledgeBase({ name: ` ${name} `, embeddingModel: "test-model", embeddingDimension: DIM, chunking: { chunkSize: 200 } });
    return knowledgeBase!;
  }

  /** Registers a document and indexes one chunk for it through the engine, as the indexing stage does. */
  async function indexDocument(knowledgeBaseId: string, fileName: string, text: string, vector: number[], metadata: Record<string, string> = {}) {
    const { document } = await client.registerDocument({ knowledgeBaseId, fileName, mimeType: "text/plain", sizeBytes: 10n, contentHash: fileName, version: 1n, metadata });
    const chunk: EmbeddedChunk = {
      id: `${document!.id}-0`,
      documentId: document!.id,
      knowledgeBaseId,
      index: 0,
      text,
      tokenCount: 5,
      page: 0,
      pageEnd: 0,
      sectionPath: [],
      start: 0,
      end: text.length,
      vector: Float32Array.from(vector),
    };
    await engine.replaceDocumentChunks(knowledgeBaseId, document!.id, fileName, [chunk]);
    return document!;
  }

  it("creates a knowledge base with a trimmed name and chunking defaults, finds it by name and lists it", async () => {
    const kb = await createKb();
    expect(kb.name).toBe("manuals");
    expect(kb.chunking).toMatchObject({ chunkSize: 200, chunkOverlap: 0, separators: [] });
    expect((await client.getKnowledgeBase({ knowledgeBase: "manuals" })).knowledgeBase?.id).toBe(kb.id);
    expect((await client.listKnowledgeBases({})).knowledgeBases.map((k) => k.id)).toEqual([kb.id]);
  });

  it("lists only the named bases, by id or name and in the order named; one that does not exist is NotFound", async () => {
    const manuals = await createKb("manuals");
    const guides = await createKb("guides");
    await createKb("others");
    const named = (await client.listKnowledgeBases({ knowledgeBases: [guides.id, "manuals"] })).knowledgeBases;
    expect(named.map((k) => k.id)).toEqual([guides.id, manuals.id]);
    expect((await client.listKnowledgeBases({})).knowledgeBases).toHaveLength(3);
    expect(await codeOf(client.listKnowledgeBases({ knowledgeBases: ["manuals", "missing"] }))).toBe(Code.NotFound);
  });

  it("serves the score bands of a base's model from its recorded distribution, none for a model never measured", async () => {
    const recorded = catalogModel("all-MiniLM-L6-v2-int8").scores!;
    await client.createKnowledgeBase({ name: "measured", embeddingModel: "all-MiniLM-L6-v2-int8", embeddingDimension: DIM, chunking: { chunkSize: 200 } });
    await createKb("unmeasured");
    const bands = (await client.getKnowledgeBase({ knowledgeBase: "measured" })).knowledgeBase?.vectorScoreBands;
    expect(bands?.relevantMedian).toBeCloseTo(recorded.relevant.p50, 5);
    expect(bands?.relevantP25).toBeCloseTo(recorded.relevant.p25, 5);
    expect(bands?.bestIrrelevantMedian).toBeCloseTo(recorded.bestIrrelevant.p50, 5);
    expect(bands?.measuredOn).toEqual(["scifact", "arguana-public"]);
    const listed = (await client.listKnowledgeBases({})).knowledgeBases;
    expect(listed.find((kb) => kb.name === "measured")?.vectorScoreBands?.relevantMedian).toBeCloseTo(recorded.relevant.p50, 5);
    expect(listed.find((kb) => kb.name === "unmeasured")?.vectorScoreBands).toBeUndefined();
  });

  it("maps bad and conflicting knowledge bases to InvalidArgument and AlreadyExists", async () => {
    await createKb();
    expect(await codeOf(client.createKnowledgeBase({ name: "  ", embeddingModel: "m", embeddingDimension: DIM, chunking: { chunkSize: 200 } }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.createKnowledgeBase({ name: "nodim", embeddingModel: "m", chunking: { chunkSize: 200 } }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.createKnowledgeBase({ name: "nochunking", embeddingModel: "m", embeddingDimension: DIM }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.createKnowledgeBase({ name: "manuals", embeddingModel: "m", embeddingDimension: DIM, chunking: { chunkSize: 200 } }))).toBe(Code.AlreadyExists);
    expect(await codeOf(client.getKnowledgeBase({ knowledgeBase: "missing" }))).toBe(Code.NotFound);
    expect(await codeOf(client.registerDocument({ knowledgeBaseId: "missing", fileName: "a.txt", contentHash: "x", version: 1n }))).toBe(Code.NotFound);
  });

  it("searches in every mode, with the explanation, and maps bad searches to the right codes", async () => {
    const kb = await createKb();
    await indexDocument(kb.id, "fox.txt", "the quick brown fox jumps", [1, 0, 0, 0]);
    await indexDocument(kb.id, "tea.txt", "green tea leaves steeped slowly", [0, 1, 0, 0]);

    const hybrid = await client.search({ knowledgeBaseIds: ["manuals"], text: "fox", vector: [1, 0, 0, 0], mode: RetrievalMode.HYBRID });
    expect(hybrid.hits.map((h) => h.fileName)).toEqual(["fox.txt", "tea.txt"]);
    expect(hybrid.hits[0].explain).toMatchObject({ bm25Rank: 1, vectorRank: 1 });
    const bm25 = await client.search({ knowledgeBaseIds: [kb.id], text: "tea", mode: RetrievalMode.BM25, topK: 1 });
    expect(bm25.hits.map((h) => h.fileName)).toEqual(["tea.txt"]);

    const search = (overrides: Parameters<typeof client.search>[0]) => client.search({ knowledgeBaseIds: [kb.id], text: "fox", vector: [1, 0, 0, 0], ...overrides });
    expect(await codeOf(search({ knowledgeBaseIds: [] }))).toBe(Code.InvalidArgument);
    expect(await codeOf(search({ topK: 1001 }))).toBe(Code.InvalidArgument);
    expect(await codeOf(search({ mode: RetrievalMode.BM25, text: " " }))).toBe(Code.InvalidArgument);
    expect(await codeOf(search({ mode: RetrievalMode.VECTOR, vector: [] }))).toBe(Code.InvalidArgument);
    expect(await codeOf(search({ mode: RetrievalMode.VECTOR, vector: [1, 0, 0] }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(search({ knowledgeBaseIds: [kb.id, "missing"] }))).toBe(Code.NotFound);
  });

  it("disables, deletes documents and knowledge bases in the engine and the catalog together", async () => {
    const kb = await createKb();
    const fox = await indexDocument(kb.id, "fox.txt", "the quick brown fox jumps", [1, 0, 0, 0]);
    const bm25 = () => client.search({ knowledgeBaseIds: [kb.id], text: "fox", mode: RetrievalMode.BM25 });

    expect((await client.setDocumentEnabled({ documentId: fox.id, enabled: false })).document?.enabled).toBe(false);
    expect((await bm25()).hits).toEqual([]);
    await client.setDocumentEnabled({ documentId: fox.id, enabled: true });
    expect((await bm25()).hits).toHaveLength(1);

    await client.deleteDocument({ documentId: fox.id });
    expect((await bm25()).hits).toEqual([]);
    expect((await client.getChunks({ chunkIds: [`${fox.id}-0`] })).chunks).toEqual([]);
    expect(await codeOf(client.getDocument({ documentId: fox.id }))).toBe(Code.NotFound);
    expect(await codeOf(client.deleteDocument({ documentId: fox.id }))).toBe(Code.NotFound);

    await client.deleteKnowledgeBase({ knowledgeBaseId: "manuals" });
    expect(await codeOf(client.getKnowledgeBase({ knowledgeBase: kb.id }))).toBe(Code.NotFound);
    expect(await codeOf(bm25())).toBe(Code.NotFound);
    expect(await codeOf(client.deleteKnowledgeBase({ knowledgeBaseId: kb.id }))).toBe(Code.NotFound);
  });

  it("filters a search by document metadata, every pair ANDed, in every mode", async () => {
    const kb = await createKb();
    await indexDocument(kb.id, "fox-en.txt", "the quick brown fox", [1, 0, 0, 0], { lang: "en", team: "a" });
    await indexDocument(kb.id, "fox-de.txt", "the fox in German", [0.9, 0.1, 0, 0], { lang: "de", team: "a" });
    await indexDocument(kb.id, "fox-none.txt", "a fox without metadata", [0.8, 0.2, 0, 0]);
    const files = async (metadataEquals: Record<string, string>, mode = RetrievalMode.HYBRID) =>
      (await client.search({ knowledgeBaseIds: [kb.id], text: "fox", vector: [1, 0, 0, 0], mode, metadataEquals })).hits.map((h) => h.fileName).sort();
    expect(await files({})).toEqual(["fox-de.txt", "fox-en.txt", "fox-none.txt"]);
    expect(await files({ team: "a" })).toEqual(["fox-de.txt", "fox-en.txt"]);
    expect(await files({ team: "a", lang: "de" }, RetrievalMode.BM25)).toEqual(["fox-de.txt"]);
    expect(await files({ team: "a", lang: "de" }, RetrievalMode.VECTOR)).toEqual(["fox-de.txt"]);
    expect(await files({ team: "b" })).toEqual([]);
  });

  it("returns chunks by position and refuses a position without its knowledge base or document", async () => {
    const kb = await createKb();
    const fox = await indexDocument(kb.id, "fox.txt", "the quick brown fox jumps", [1, 0, 0, 0]);
    const { chunks } = await client.getChunks({ positions: [{ knowledgeBaseId: kb.id, documentId: fox.id, index: 0 }, { knowledgeBaseId: kb.id, documentId: fox.id, index: 1 }] });
    expect(chunks.map((c) => c.id)).toEqual([`${fox.id}-0`]);
    expect(await codeOf(client.getChunks({ positions: [{ documentId: fox.id, index: 0 }] }))).toBe(Code.InvalidArgument);
    const many = Array.from({ length: 1001 }, (_, index) => ({ knowledgeBaseId: kb.id, documentId: fox.id, index }));
    expect(await codeOf(client.getChunks({ positions: many }))).toBe(Code.InvalidArgument);
  });

  it("keeps an assistant's whole configuration through the RPCs, mounts resolved to ids and unset fields left unset", async () => {
    const kb = await createKb();
    const sent = {
      name: " keeper ",
      description: "answers from the manuals",
      systemPrompt: "Be brief.",
      knowledgeBases: [{ knowledgeBase: "manuals", topK: 3, priority: 2 }],
      retrieval: { mode: RetrievalMode.BM25, topK: 6, minScore: 0.5, rerank: true, rewrite: QueryRewriteMode.HYDE },
      hideFileNames: true,
    };
    const { assistant: made } = await client.createAssistant({ assistant: sent });
    expect(made).toMatchObject({ ...sent, name: "keeper", knowledgeBases: [{ knowledgeBase: kb.id, topK: 3, priority: 2 }], correctionsKnowledgeBaseId: "" });
    expect(made!.createdAt).toBeDefined();
    expect((await client.getAssistant({ assistant: "keeper" })).assistant).toEqual(made);
    const { assistant: bare } = await client.createAssistant({ assistant: { name: "bare", knowledgeBases: [{ knowledgeBase: kb.id }] } });
    expect(bare!.retrieval).toBeUndefined();
    const { assistant: updated } = await client.updateAssistant({ assistant: "bare", update: { name: "bare", knowledgeBases: [{ knowledgeBase: kb.id }], retrieval: { topK: 4 } } });
    expect(updated!.retrieval).toMatchObject({ mode: RetrievalMode.UNSPECIFIED, topK: 4, rewrite: QueryRewriteMode.UNSPECIFIED });
    expect((await client.listAssistants({})).assistants.map((a) => a.name)).toEqual(["bare", "keeper"]);
    expect(await codeOf(client.createAssistant({}))).toBe(Code.InvalidArgument);
  });

  it("numbers turns, keeps their content as sent and reads the conversation back with them", async () => {
    const kb = await createKb();
    const { conversation } = await client.createConversation({ title: "  Where   was it ground? ", knowledgeBaseIds: [kb.id] });
    expect(conversation).toMatchObject({ title: "Where was it ground?", assistantId: "", knowledgeBaseIds: [kb.id], turnCount: 0 });
    const at = { seconds: 1_700_000_000n, nanos: 0 };
    const turn = { id: "tn_1", conversationId: conversation!.id, number: 9, question: "Where?", answer: "In Paris [1].", citations: [{ marker: 1, chunkId: "c1", fileName: "a.md" }], provenance: { retrievalQuery: "where ground", model: "stub" }, createdAt: at };
    const { turn: saved } = await client.saveTurn({ turn });
    expect(saved).toMatchObject({ ...turn, number: 1 });
    await client.saveTurn({ turn: { id: "tn_2", conversationId: conversation!.id, question: "And then?" } });
    const read = await client.getConversation({ conversationId: conversation!.id, includeTurns: true });
    expect(read.conversation!.turnCount).toBe(2);
    expect(read.turns.map((t) => [t.id, t.number])).toEqual([["tn_1", 1], ["tn_2", 2]]);
    expect(read.turns[0]).toEqual(saved);
    expect((await client.getTurn({ turnId: "tn_1" })).turn).toEqual(saved);
    expect(await codeOf(client.saveTurn({ turn: { conversationId: conversation!.id } }))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.getTurn({ turnId: "tn_none" }))).toBe(Code.NotFound);
  });
});
