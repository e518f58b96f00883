import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeDocumentStoreEngineWrites } from "../testing/document-store-engine.contract.ts";
import { describeSearchEngineContract } from "../testing/search-engine.contract.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";
import { ElasticsearchSearchEngine } from "./elasticsearch-search-engine.ts";
import { elasticsearchTestSpace } from "../testing/elasticsearch-test-support.ts";

describeWithEngine("ELASTICSEARCH_URL", "ElasticsearchSearchEngine", (url) => {
  describeSearchEngineContract("Elasticsearch", async () => {
    const space = elasticsearchTestSpace(url);
    const engine = new ElasticsearchSearchEngine(space.client, { indexPrefix: `${space.prefix}chunks-` });
    return {
      engine,
      async cleanup() {
        await engine.close();
        await space.cleanup();
      },
    };
  });

  describeDocumentStoreEngineWrites("Elasticsearch", async () => {
    const space = elasticsearchTestSpace(url);
    return {
      openEngine: () => new ElasticsearchSearchEngine(space.client, { indexPrefix: `${space.prefix}chunks-` }),
      store: new ElasticsearchDocumentStore(space.client),
      cleanup: () => space.cleanup(),
    };
  });
});
