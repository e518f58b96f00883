// Wires the distributed stores for the index service: one OpenSearch client shared by the catalog
// and the search engine, closed once. Names follow the configured prefix: <prefix>-catalog for the
// catalog, <prefix>-chunks-<kb> aliases for chunks.
import { Client } from "@opensearch-project/opensearch";
import type { Catalog } from "../catalog.ts";
import type { IndexConfig } from "../config.ts";
import type { SearchEngine } from "../search-engine.ts";
import { OpenSearchCatalog } from "./opensearch-catalog.ts";
import { OpenSearchSearchEngine } from "./opensearch-search-engine.ts";

export type OpenSearchIndexConfig = Extract<IndexConfig, { backend: "opensearch" }>;

export async function openOpenSearchStores(config: OpenSearchIndexConfig): Promise<{ catalog: Catalog; engine: SearchEngine; close(): Promise<void> }> {
  const client = new Client({ node: config.url });
  // config.nativeHybrid is not used: hybrid always runs BM25 and kNN in one _msearch and fuses them
  // with rrf-fusion.ts, because the native hybrid query returns only fused scores and every hit must
  // explain its rank in each list (and 2.19's RRF ranker has no per-list weights).
  const engine = new OpenSearchSearchEngine(client, { indexPrefix: `${config.indexPrefix}-chunks-` });
  const catalog = new OpenSearchCatalog(client, { index: `${config.indexPrefix}-catalog` });
  return {
    catalog,
    engine,
    async close() {
      await engine.close();
      await catalog.close();
      await client.close();
    },
  };
}
