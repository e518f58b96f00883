import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Env } from "../../lib/config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { AssembledService, SharedDeps } from "../../lib/service-runtime.ts";
import type { ApiKeyStore } from "./api-key-store.ts";
import { ApiKeyRegistry } from "./api-key-registry.ts";
import { AssistantRegistry } from "./assistant-registry.ts";
import type { AnswerStores } from "./answer-stores.ts";
import { ConversationRegistry } from "./conversation-registry.ts";
import type { Catalog } from "./catalog.ts";
import { indexConfig } from "./config.ts";
import type { SearchEngine } from "./search-engine.ts";
import { build } from "./server.ts";
import { openDatabase } from "./sqlite/open-database.ts";
import { SqliteApiKeyStore } from "./sqlite/sqlite-api-key-store.ts";
import { SqliteAssistantStore } from "./sqlite/sqlite-assistant-store.ts";
import { SqliteConversationStore } from "./sqlite/sqlite-conversation-store.ts";
import { SqliteCatalog } from "./sqlite/sqlite-catalog.ts";
import { SqliteSearchEngine } from "./sqlite/sqlite-search-engine.ts";
import { startIndexWorkers } from "./worker.ts";

export async function openStores(env: Env): Promise<{ catalog: Catalog; engine: SearchEngine; apiKeys: ApiKeyStore; close(): Promise<void> } & AnswerStores> {
  const config = indexConfig(env);
  if (config.backend === "sqlite") {
    mkdirSync(dirname(config.file), { recursive: true });
    const db = openDatabase(config.file);
    const engine = new SqliteSearchEngine(db, { ownsDatabase: false });
    return {
      catalog: new SqliteCatalog(db),
      engine,
      apiKeys: new SqliteApiKeyStore(db),
      assistants: new SqliteAssistantStore(db),
      conversations: new SqliteConversationStore(db),
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

export async function assembleIndex(env: Env, shared: SharedDeps): Promise<AssembledService> {
  const logger = shared.logger.child({ service: "index" });
  const stores = await openStores(env);
  const deps = {
    catalog: stores.catalog,
    engine: stores.engine,
    apiKeys: new ApiKeyRegistry(stores.apiKeys, stores.catalog),
    assistants: new AssistantRegistry(stores.assistants, stores.catalog),
    conversations: new ConversationRegistry(stores.conversations),
  };
  return {
    name: "index",
    server: build({ ...deps, logger }),
    startWorkers: () => startIndexWorkers({ ...deps, bus: shared.bus, logger, redrive: shared.redrive }),
    close: () => stores.close(),
  };
}
