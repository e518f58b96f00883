import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeCatalogContract } from "../testing/catalog.contract.ts";
import { ElasticsearchCatalog } from "./elasticsearch-catalog.ts";
import { elasticsearchTestSpace } from "../testing/elasticsearch-test-support.ts";

describeWithEngine("ELASTICSEARCH_URL", "ElasticsearchCatalog", (url) => {
  describeCatalogContract("Elasticsearch", async () => {
    const space = elasticsearchTestSpace(url);
    return { catalog: new ElasticsearchCatalog(space.client, { index: `${space.prefix}catalog`, listPageSize: 2 }), cleanup: () => space.cleanup() };
  });
});
