// Wires the Elasticsearch stores for the index service: one client shared by the catalog and the
// search engine, closed once. Names follow the configured prefix: <prefix>-catalog for the catalog,
// <prefix>-chunks-<kb> aliases for chunks.
import { Client } from "@elastic/elasticsearch";
import type { ApiKeyStore } from "../keys/api-key-store.ts";
import type { Catalog } from "../catalog/catalog.ts";
import { documentStoreRecordStores, type RecordStores } from "../document-store/record-stores.ts";
import { DocumentStoreApiKeyStore } from "../document-store/document-store-api-key-store.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";
import type { IndexConfig } from "../config.ts";
import { elasticsearchClientOptions } from "../../../lib/engine-connection.ts";
import type { SearchEngine } from "../search/search-engine.ts";
import { ElasticsearchCatalog } from "./elasticsearch-catalog.ts";
import { ElasticsearchSearchEngine } from "./elasticsearch-search-engine.ts";

export type ElasticsearchIndexConfig = Extract<IndexConfig, { backend: "elasticsearch" }>;

export async function openElasticsearchStores(config: ElasticsearchIndexConfig): Promise<{ catalog: Catalog; engine: SearchEngine; apiKeys: ApiKeyStore; close(): Promise<void> } & RecordStores> {
  const client = new Client(elasticsearchClientOptions(config.connection ?? { url: config.url }));
  const engine = new ElasticsearchSearchEngine(client, { indexPrefix: `${config.indexPrefix}-chunks-`, ...config.indices });
  const catalog = new ElasticsearchCatalog(client, { index: `${config.indexPrefix}-catalog`, replicas: config.indices?.replicas });
  return {
    catalog,
    engine,
    apiKeys: new DocumentStoreApiKeyStore(new ElasticsearchDocumentStore(client), `${config.indexPrefix}-api-keys`, config.indices?.replicas),
    ...documentStoreRecordStores(new ElasticsearchDocumentStore(client), config.indexPrefix, config.indices?.replicas),
    async close() {
      await engine.close();
      await catalog.close();
      await client.close();
    },
  };
}
