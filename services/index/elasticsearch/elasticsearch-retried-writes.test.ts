import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeRetriedWritesContract } from "../testing/retried-writes.contract.ts";
import { elasticsearchTestSpace } from "../testing/elasticsearch-test-support.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";

describeWithEngine("ELASTICSEARCH_URL", "Elasticsearch writes sent again by the client", (url) => {
  describeRetriedWritesContract("Elasticsearch", async () => {
    const space = elasticsearchTestSpace(url);
    return { store: new ElasticsearchDocumentStore(space.client), index: `${space.prefix}records`, cleanup: () => space.cleanup() };
  });
});
