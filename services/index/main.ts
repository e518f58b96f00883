import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Env } from "../../lib/config.ts";
import { openLeases } from "../../lib/leases/lease-store-from-config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Peers } from "../../lib/rpc/peers.ts";
import type { AssembledService, SharedDeps } from "../../lib/service-runtime.ts";
import type { ApiKeyStore } from "./keys/api-key-store.ts";
import { ApiKeyRegistry } from "./keys/api-key-registry.ts";
import { AssistantRegistry } from "./assistants/assistant-registry.ts";
import type { RecordStores } from "./document-store/record-stores.ts";
import { ConversationRegistry } from "./conversations/conversation-registry.ts";
import type { Catalog } from "./catalog/catalog.ts";
import { indexConfig } from "./config.ts";
import { embedderVectorizer } from "./embedder-client.ts";
import { ModelChanges } from "./catalog/model-change.ts";
import type { SearchEngine } from "./search/search-engine.ts";
import { build } from "./server.ts";
import { openDatabase } from "./sqlite/open-database.ts";
import { SqliteApiKeyStore } from "./sqlite/sqlite-api-key-store.ts";
import { SqliteAssistantStore } from "./sqlite/sqlite-assistant-store.ts";
import { SqliteConversationStore } from "./sqlite/sqlite-conversation-store.ts";
import { SqliteCatalog } from "./sqlite/sqlite-catalog.ts";
import { SqliteSearchEngine } from "./sqlite/sqlite-search-engine.ts";
import { SqliteSourceStore } from "./sqlite/sqlite-source-store.ts";
import { startIndexWorkers } from "./worker.ts";
import { StagePayloads, stageInlineMaxBytes } from "../../lib/pipeline/stage-payloads.ts";
import { ChunkEdits } from "./catalog/chunk-edits.ts";

export async function openStores(env: Env, logger?: Logger): Promise<{ catalog: Catalog; engine: SearchEngine; apiKeys: ApiKeyStore; close(): Promise<void> } & RecordStores> {
  const config = indexConfig(env);
  if (config.backend === "sqlite") {
    mkdirSync(dirname(config.file), { recursive: true });
    const db = openDatabase(config.file, { logger });
    const engine = new SqliteSearchEngine(db, { ownsDatabase: false, vectorIndex: config.vectorIndex, readThreads: config.readThreads });
    return {
      catalog: new SqliteCatalog(db),
      engine,
      apiKeys: new SqliteApiKeyStore(db),
      assistants: new SqliteAssistantStore(db),
      conversations: new SqliteConversationStore(db),
      sources: new SqliteSourceStore(db),
      close: async () => { await engine.close(); db.close(); },
    };
  }
  if (config.backend === "elasticsearch") {
    const { openElasticsearchStores } = await import("./elasticsearch/open-stores.ts");
    return openElasticsearchStores(config);
  }
  const { openOpenSearchStores } = await import("./opensearch/open-stores.ts");
  return openOpenSearchStores(config);
}

/** peers: the embedder, for changes of embedding model only (not waited for at start-up). */
export async function assembleIndex(env: Env, shared: SharedDeps, peers: Peers): Promise<AssembledService> {
  const logger = shared.logger.child({ service: "index" });
  const stores = await openStores(env, logger);
  const vectorizer = embedderVectorizer(() => peers.transport("embedder"));
  // In the engine the replicas share (SQLite embedded): which index replica runs each base's change of model.
  const leases = await openLeases(env, logger);
  const modelChanges = new ModelChanges({ catalog: stores.catalog, engine: stores.engine, vectorizer, logger, leases });
  // Every other writer goes through the change's per-base lock.
  const engine = modelChanges.guard(stores.engine);
  const chunkEdits = new ChunkEdits({ catalog: stores.catalog, engine, vectorizer });
  const deps = {
    catalog: stores.catalog,
    engine,
    chunkEdits,
    apiKeys: new ApiKeyRegistry(stores.apiKeys, stores.catalog),
    assistants: new AssistantRegistry(stores.assistants, stores.catalog),
    conversations: new ConversationRegistry(stores.conversations),
    sources: stores.sources,
    modelChanges,
    vectorizer,
    backend: indexConfig(env).backend,
  };
  return {
    name: "index",
    server: build({ ...deps, logger, metrics: shared.metrics }),
    startWorkers: async () => {
      const payloads = new StagePayloads(shared.blobs, stageInlineMaxBytes(env));
      const workers = await startIndexWorkers({ ...deps, bus: shared.bus, logger, redrive: shared.redrive, metrics: shared.metrics, payloads });
      await modelChanges.watchInterrupted();
      return workers;
    },
    close: async () => {
      await modelChanges.close();
      await leases.close();
      await stores.close();
    },
  };
}
