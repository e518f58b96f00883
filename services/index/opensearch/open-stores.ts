// Wires the distributed stores for the index service: one OpenSearch client shared by the catalog
// and the search engine, closed once. Names follow the configured prefix: <prefix>-catalog for the
// catalog, <prefix>-chunks-<kb> aliases for chunks, <prefix>-rrf-60 (and kin) for search pipelines.
// Whether hybrid search runs natively is settled here, once: the neural-search plugin is looked up
// at start-up, and a setting the cluster cannot honour fails the start, not the first search.
import { Client } from "@opensearch-project/opensearch";
import type { ApiKeyStore } from "../keys/api-key-store.ts";
import type { Catalog } from "../catalog/catalog.ts";
import { documentStoreRecordStores, type RecordStores } from "../document-store/record-stores.ts";
import { DocumentStoreApiKeyStore } from "../document-store/document-store-api-key-store.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";
import type { IndexConfig } from "../config.ts";
import { openSearchClientOptions } from "../../../lib/engine-connection.ts";
import { OpenSearchCatalog } from "./opensearch-catalog.ts";
import { toDomainError } from "./opensearch-errors.ts";
import { detectNeuralSearch, resolveNativeHybrid } from "./opensearch-native-hybrid.ts";
import { OpenSearchSearchEngine } from "./opensearch-search-engine.ts";

export type OpenSearchIndexConfig = Extract<IndexConfig, { backend: "opensearch" }>;

export async function openOpenSearchStores(
  config: OpenSearchIndexConfig,
): Promise<{ catalog: Catalog; engine: OpenSearchSearchEngine; apiKeys: ApiKeyStore; close(): Promise<void> } & RecordStores> {
  const client = new Client(openSearchClientOptions(config.connection ?? { url: config.url }));
  try {
    const native = await resolveNativeHybrid(config.nativeHybrid, config.fusion, async () => {
      try {
        return await detectNeuralSearch(client);
      } catch (error) {
        throw toDomainError(error, "look up OpenSearch plugins");
      }
    });
    const engine = new OpenSearchSearchEngine(client, {
      indexPrefix: `${config.indexPrefix}-chunks-`,
      ...config.indices,
      nativeHybrid: native ? { fusion: config.fusion, pipelinePrefix: `${config.indexPrefix}-` } : undefined,
    });
    await engine.prepare();
    const catalog = new OpenSearchCatalog(client, { index: `${config.indexPrefix}-catalog`, replicas: config.indices?.replicas });
    return {
      catalog,
      engine,
      apiKeys: new DocumentStoreApiKeyStore(new OpenSearchDocumentStore(client), `${config.indexPrefix}-api-keys`, config.indices?.replicas),
      ...documentStoreRecordStores(new OpenSearchDocumentStore(client), config.indexPrefix, config.indices?.replicas),
      async close() {
        await engine.close();
        await catalog.close();
        await client.close();
      },
    };
  } catch (error) {
    await client.close();
    throw error;
  }
}
