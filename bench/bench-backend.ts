// One Quarry under test plus the bench's own handle on the same store: an embedded Quarry (all
// services in this process, the gateway on a free port) whose index is SQLite or OpenSearch, a
// gateway client for the RPCs, a SearchEngine opened the same way the index service opens it (to
// load synthetic chunks through the engine's write path), and the engine's raw query — the SQL
// or the `_search` body the engine itself sends — for the baseline.
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { directoryBytes } from "./directory-size.ts";
import { startEmbedded, type EmbeddedQuarry } from "../app/embedded.ts";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";
import { withHeadingPath } from "../lib/chunk-context.ts";
import { sqlitePath, type Env } from "../lib/config.ts";
import type { SearchQuery } from "../lib/domain.ts";
import { silentLogger, type Logger } from "../lib/logger.ts";
import { indexConfig, type SearchEngine, openDatabase, SqliteSearchEngine } from "../services/index/index.ts";
import { RawSqlThreads } from "./raw-sql-threads.ts";
import { planSqliteRaw, runSqliteRaw } from "./sqlite-raw-query.ts";

export type BackendName = "embedded" | "opensearch";

export interface BenchBackendOptions {
  backend: BackendName;
  opensearchUrl?: string;
  /** Extra environment for the Quarry under test (a chat model for bench chat). */
  env?: Env;
  logger?: Logger;
  /** Embedded: also a raw baseline on this many threads of its own (prepareRawOnThreads); 0 for none. */
  rawThreads?: number;
}

/** A raw query prepared for one search: run() sends exactly what the engine would, nothing else. */
export type RawQuery = () => Promise<unknown> | unknown;

export interface BenchBackend {
  name: BackendName;
  quarry: EmbeddedQuarry;
  client: QuarryClient;
  /** The bench's own engine on the same store, configured as the index service configures its own. */
  engine: SearchEngine;
  /** Describes the raw baseline in one line, for the report. */
  rawDescription: string;
  /** The stored chunk texts of a knowledge base, grouped by document in chunk order. */
  chunkTexts(knowledgeBaseId: string): Promise<string[][]>;
  /** Prepares the engine's own raw query for a search (on the bench's connection). */
  prepareRaw(query: SearchQuery): Promise<RawQuery>;
  /** The store's size on disk: the data folder (SQLite file, WAL, vector index files), or OpenSearch's primary store of this run's indices. */
  diskBytes(): Promise<number>;
  /** The embedded Quarry's data folder (its SQLite file lives there). */
  dataDir: string;
  /** The same raw query on rawThreads threads, each with its own connection (embedded only). */
  prepareRawOnThreads?(query: SearchQuery): Promise<RawQuery>;
  /** Stops Quarry and removes its data folder, first copied to `keepCopyIn` when given (embedded: a store other processes can start on). */
  close(keepCopyIn?: string): Promise<void>;
}

export async function startBenchBackend(options: BenchBackendOptions): Promise<BenchBackend> {
  const dataDir = await mkdtemp(join(tmpdir(), "quarry-bench-"));
  // Built from scratch, as the e2e fixture does, so a developer's engines or chat model cannot leak in.
  const prefix = `bench-${randomBytes(5).toString("hex")}`;
  const env: Env = {
    HOME: process.env.HOME,
    QUARRY_MODELS_DIR: process.env.QUARRY_MODELS_DIR,
    QUARRY_DATA_DIR: dataDir,
    QUARRY_PORT: "0",
    QUARRY_HOST: "127.0.0.1",
    ...(options.backend === "opensearch" ? { OPENSEARCH_URL: requireUrl(options.opensearchUrl), QUARRY_OPENSEARCH_PREFIX: prefix } : {}),
    ...options.env,
  };
  const quarry = await startEmbedded(env, options.logger ?? silentLogger);
  const client = gatewayClient(quarry.url);
  const removeData = () => rm(dataDir, { recursive: true, force: true });
  try {
    if (options.backend === "embedded") {
      const db = openDatabase(sqlitePath(env));
      const config = indexConfig(env);
      // The same approximate-index settings as the index service's, so the bench's searches take the same path.
      const engine = new SqliteSearchEngine(db, { ownsDatabase: true, vectorIndex: config.backend === "sqlite" ? config.vectorIndex : undefined });
      const rawThreads = options.rawThreads ? new RawSqlThreads(sqlitePath(env), options.rawThreads) : undefined;
      return {
        name: "embedded",
        quarry,
        client,
        engine,
        rawDescription: "the engine's own SQL on a second connection: FTS5 MATCH … ORDER BY bm25 LIMIT k, and the sqlite-vec kNN MATCH with k, plus the chunk rows",
        dataDir,
        diskBytes: () => directoryBytes(dataDir),
        prepareRaw: async (query) => {
          const plan = planSqliteRaw(db, query);
          return () => runSqliteRaw(db, plan);
        },
        ...(rawThreads
          ? {
              prepareRawOnThreads: async (query: SearchQuery) => {
                const plan = planSqliteRaw(db, query);
                return () => rawThreads.run(plan);
              },
            }
          : {}),
        chunkTexts: async (knowledgeBaseId) =>
          groupByDocument(
            db
              .prepare(`SELECT document_id, text, section_path FROM chunks WHERE knowledge_base_id = ? ORDER BY document_id, chunk_index`)
              .all(knowledgeBaseId)
              .map((row) => {
                const r = row as { document_id: string; text: string; section_path: string };
                return { document_id: r.document_id, text: r.text, section_path: JSON.parse(r.section_path) as string[] };
              }),
          ),
        async close(keepCopyIn) {
          await rawThreads?.close();
          await engine.close();
          await quarry.stop();
          if (keepCopyIn) await cp(dataDir, keepCopyIn, { recursive: true });
          await removeData();
        },
      };
    }
    const os = await openOpenSearchHandle(env);
    return {
      name: "opensearch",
      quarry,
      client,
      engine: os.engine,
      rawDescription: `the engine's own ${os.native ? "_search (native hybrid query through its search pipeline)" : "_msearch"} requests, captured from the engine and replayed with the same body`,
      prepareRaw: (query) => os.prepareRaw(query),
      dataDir,
      diskBytes: () => os.storeBytes(prefix),
      chunkTexts: (knowledgeBaseId) => os.chunkTexts(knowledgeBaseId),
      async close(keepCopyIn) {
        if (keepCopyIn) throw new Error("an OpenSearch bench store lives in the engine: no copy of it can be kept in a folder");
        await quarry.stop();
        await os.cleanup(prefix);
        await removeData();
      },
    };
  } catch (error) {
    await quarry.stop();
    await removeData();
    throw error;
  }
}

function requireUrl(url: string | undefined): string {
  if (!url) throw new Error("the opensearch backend needs OPENSEARCH_URL");
  return url;
}

interface OpenSearchHandle {
  engine: SearchEngine;
  native: boolean;
  prepareRaw(query: SearchQuery): Promise<RawQuery>;
  /** The same raw query on rawThreads threads, each with its own connection (embedded only). */
  prepareRawOnThreads?(query: SearchQuery): Promise<RawQuery>;
  chunkTexts(knowledgeBaseId: string): Promise<string[][]>;
  storeBytes(prefix: string): Promise<number>;
  cleanup(prefix: string): Promise<void>;
}

interface StoredChunkText {
  document_id: string;
  text: string;
  section_path: string[];
}

/**
 * A document's chunks as the vectorizing stage embeds them: each under its heading path
 * (withHeadingPath), so the raw baseline embeds exactly the inputs the pipeline did.
 */
function groupByDocument(rows: StoredChunkText[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const row of rows) {
    let group = groups.get(row.document_id);
    if (!group) groups.set(row.document_id, (group = []));
    group.push(withHeadingPath(row.text, row.section_path));
  }
  return [...groups.values()];
}

async function openOpenSearchHandle(env: Env): Promise<OpenSearchHandle> {
  const { Client } = await import("@opensearch-project/opensearch");
  const { OpenSearchSearchEngine } = await import("../services/index/lab.ts");
  const { detectNeuralSearch, resolveNativeHybrid } = await import("../services/index/lab.ts");
  const config = indexConfig(env);
  if (config.backend !== "opensearch") throw new Error("OPENSEARCH_URL is not set");
  const { openSearchClientOptions } = await import("../lib/engine-connection.ts");
  const client = new Client(openSearchClientOptions(config.connection ?? { url: config.url }));
  // The same decisions open-stores.ts makes for the index service, so both engines send the same requests.
  const native = await resolveNativeHybrid(config.nativeHybrid, config.fusion, () => detectNeuralSearch(client));
  const engine = new OpenSearchSearchEngine(client, {
    indexPrefix: `${config.indexPrefix}-chunks-`,
    nativeHybrid: native ? { fusion: config.fusion, pipelinePrefix: `${config.indexPrefix}-` } : undefined,
  });
  await engine.prepare();

  // Capturing the engine's own requests (rather than rebuilding its bodies here) guarantees the raw
  // baseline sends byte for byte what Quarry sends.
  type TransportParams = { method: string; path: string; body?: unknown; bulkBody?: unknown; querystring?: unknown };
  const transport = client.transport as unknown as { request(params: TransportParams, options?: unknown): Promise<unknown> };
  const send = transport.request.bind(transport);
  let capturing: TransportParams[] | undefined;
  transport.request = (params: TransportParams, requestOptions?: unknown) => {
    if (capturing && /_m?search/.test(params.path) && !params.path.startsWith("/_search/pipeline")) capturing.push(structuredClone(params));
    return send(params, requestOptions);
  };

  return {
    engine,
    native,
    async prepareRaw(query) {
      // Only this call's searches are kept: mapping look-ups and pipeline creation are not part of a query.
      capturing = [];
      let requests: TransportParams[];
      try {
        await engine.search(query);
      } finally {
        requests = capturing;
        capturing = undefined;
      }
      if (requests.length === 0) throw new Error("the engine sent no search request to capture");
      return async () => {
        for (const params of requests) await send(structuredClone(params));
      };
    },
    async chunkTexts(knowledgeBaseId) {
      const { body } = await client.search({
        index: engine.aliasFor(knowledgeBaseId),
        body: {
          size: 10_000,
          track_total_hits: true,
          _source: ["document_id", "chunk_index", "text", "section_path"],
          query: { term: { record_type: "chunk" } },
          sort: [{ document_id: "asc" }, { chunk_index: "asc" }],
        },
      });
      const hits = (body as unknown as { hits: { total: { value: number }; hits: { _source: StoredChunkText }[] } }).hits;
      if (hits.total.value > hits.hits.length) throw new Error(`the ingest bench reads at most 10,000 chunks back from OpenSearch; this corpus has ${hits.total.value}`);
      return groupByDocument(hits.hits.map((h) => h._source));
    },
    async storeBytes(prefix) {
      await client.indices.refresh({ index: `${prefix}-*` });
      const { body } = await client.indices.stats({ index: `${prefix}-*`, metric: "store" });
      return Number((body as unknown as { _all: { primaries: { store?: { size_in_bytes: number } } } })._all.primaries.store?.size_in_bytes ?? 0);
    },
    async cleanup(prefix) {
      await engine.close();
      // Everything this run created carries its prefix: chunk and catalog indices, the template, pipelines.
      await client.indices.delete({ index: `${prefix}-*`, expand_wildcards: "all" }).catch(() => undefined);
      await client.indices.deleteIndexTemplate({ name: `${prefix}-chunks-template` }).catch(() => undefined);
      await send({ method: "DELETE", path: `/_search/pipeline/${prefix}-*` }).catch(() => undefined);
      await client.close();
    },
  };
}
