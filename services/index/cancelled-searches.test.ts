// Issue #23 (cancelled streams): a search whose caller went away costs no search. On the read
// threads, reads waiting for a thread are dropped when their signal fires, and only the one already
// running finishes (piscina's completed count says how many ran); through the index's RPCs, the
// call's signal reaches the engine over the in-process transport, the caller sees Canceled and the
// search is counted as cancelled, not as a search run.
import { setMaxListeners } from "node:events";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import type { EmbeddedChunk, SearchQuery } from "../../lib/domain.ts";
import { CancelledError } from "../../lib/errors.ts";
import { silentLogger } from "../../lib/logger.ts";
import { PrometheusMetrics } from "../../lib/metrics/prometheus-metrics.ts";
import { AssistantRegistry } from "./assistants/assistant-registry.ts";
import { ConversationRegistry } from "./conversations/conversation-registry.ts";
import { ApiKeyRegistry } from "./keys/api-key-registry.ts";
import type { SearchEngine } from "./search/search-engine.ts";
import { build } from "./server.ts";
import { DEFAULT_APPROXIMATE_KNN } from "./sqlite/approximate-knn.ts";
import { SqliteReadThreads } from "./sqlite/read-threads.ts";
import { SqliteApiKeyStore } from "./sqlite/sqlite-api-key-store.ts";
import { SqliteAssistantStore } from "./sqlite/sqlite-assistant-store.ts";
import { SqliteCatalog } from "./sqlite/sqlite-catalog.ts";
import { SqliteConversationStore } from "./sqlite/sqlite-conversation-store.ts";
import { SqliteSearchEngine } from "./sqlite/sqlite-search-engine.ts";
import { openTestDatabase } from "./testing/sqlite-test-database.ts";

const QUEUED = 40;

function chunks(knowledgeBaseId: string, documentId: string, n: number): EmbeddedChunk[] {
  return Array.from({ length: n }, (_, i) => {
    const text = `granite quarry number ${i} with basalt and slate`;
    return { id: `${documentId}-${i}`, documentId, knowledgeBaseId, index: i, text, tokenCount: 8, page: 0, pageEnd: 0, sectionPath: [], start: 0, end: text.length, vector: Float32Array.from([1, i, 0, 0]) };
  });
}

const bm25 = (knowledgeBaseId: string): SearchQuery => ({ knowledgeBaseIds: [knowledgeBaseId], text: "granite basalt", mode: "bm25", topK: 5, minScore: 0, documentIds: [] });

describe("cancelled searches", () => {
  it("drops reads waiting for a read thread when their signal fires; the running one finishes, and a later read is answered", async () => {
    const { db, file, cleanup } = openTestDatabase();
    const writer = new SqliteSearchEngine(db);
    const threads = new SqliteReadThreads({ file, vectorIndex: DEFAULT_APPROXIMATE_KNN, threads: 1 });
    try {
      await writer.ensureKnowledgeBase("kb", 4);
      await writer.replaceDocumentChunks("kb", "doc", "doc.txt", chunks("kb", "doc", 50));
      // The thread is up and has its connection: the count starts from one read run.
      expect(await threads.read({ method: "search", query: bm25("kb") })).toHaveLength(5);
      expect(threads.completed).toBe(1);

      const caller = new AbortController();
      setMaxListeners(2 * QUEUED, caller.signal); // One caller for them all here; a request has its own.
      const reads = Array.from({ length: QUEUED }, () => threads.read({ method: "search", query: bm25("kb") }, caller.signal));
      caller.abort();
      const settled = await Promise.allSettled(reads);

      // The first took the only thread before the abort and ran; every other one was dropped unrun.
      expect(settled[0].status).toBe("fulfilled");
      const dropped = settled.filter((s) => s.status === "rejected");
      expect(dropped).toHaveLength(QUEUED - 1);
      for (const s of dropped) expect((s as PromiseRejectedResult).reason).toBeInstanceOf(CancelledError);
      expect(threads.completed).toBe(2);

      expect(await threads.read({ method: "search", query: bm25("kb") })).toHaveLength(5);
      expect(threads.completed).toBe(3);
    } finally {
      await threads.close();
      await writer.close();
      await cleanup();
    }
  });

  it("passes a Search call's signal to the engine: the caller sees Canceled, and the search counts as cancelled, not as run", async () => {
    const database = openTestDatabase();
    const catalog = new SqliteCatalog(database.db);
    const engine = new SqliteSearchEngine(database.db, { readThreads: 1 });
    // Searches wait at a gate on their way into the engine, so every call is inside the index
    // (its handler running, its signal live) when the callers go away.
    let arrived = 0;
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated = new Proxy(engine, {
      get(target, property) {
        if (property === "search") {
          return async (...args: Parameters<SearchEngine["search"]>) => {
            arrived++;
            await gate;
            return target.search(...args);
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const metrics = new PrometheusMetrics();
    const server = build({
      catalog,
      engine: gated,
      apiKeys: new ApiKeyRegistry(new SqliteApiKeyStore(database.db), catalog),
      assistants: new AssistantRegistry(new SqliteAssistantStore(database.db), catalog),
      conversations: new ConversationRegistry(new SqliteConversationStore(database.db)),
      logger: silentLogger,
      metrics,
      backend: "sqlite",
    });
    const client = createClient(IndexService, createRouterTransport(server.routes, { router: { interceptors: server.interceptors } }));
    try {
      const { knowledgeBase } = await client.createKnowledgeBase({ name: "quarries", embeddingModel: "test-model", embeddingDimension: 4, chunking: { chunkSize: 200 } });
      const kb = knowledgeBase!.id;
      await engine.replaceDocumentChunks(kb, "doc", "doc.txt", chunks(kb, "doc", 50));
      const request = { knowledgeBaseIds: [kb], text: "granite basalt", mode: RetrievalMode.BM25, topK: 5 };

      const caller = new AbortController();
      setMaxListeners(4 * QUEUED, caller.signal);
      const calls = Array.from({ length: QUEUED }, () => client.search(request, { signal: caller.signal }).then(() => Code[0], (e: unknown) => Code[ConnectError.from(e).code]));
      await expect.poll(() => arrived, { interval: 5, timeout: 10_000 }).toBe(QUEUED);
      caller.abort();
      expect(new Set(await Promise.all(calls))).toEqual(new Set(["Canceled"]));
      open();

      // The handlers saw their signals fire: each search was dropped in the engine, none was run.
      await expect.poll(async () => sample(await exposition(metrics), 'quarry_index_searches_cancelled_total{backend="sqlite"}'), { interval: 10, timeout: 10_000 }).toBe(QUEUED);
      expect(sample(await exposition(metrics), 'quarry_search_duration_seconds_count{mode="bm25",backend="sqlite"}')).toBe(0);

      // A later search is answered as ever.
      expect((await client.search(request)).hits).toHaveLength(5);
      expect(sample(await exposition(metrics), 'quarry_search_duration_seconds_count{mode="bm25",backend="sqlite"}')).toBe(1);
    } finally {
      open();
      await engine.close();
      await database.cleanup();
    }
  });
});

async function exposition(metrics: PrometheusMetrics): Promise<string> {
  return (await metrics.exposition()).text;
}

/** A sample's value in the Prometheus text format; 0 when the series is not there yet. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
