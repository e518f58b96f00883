// A write whose answer is lost after the record was written, sent again by the Elasticsearch
// client: the second try's 409 must not fail the write (see the OpenSearch twin of this test).
import { Client } from "@elastic/elasticsearch";
import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeRetriedWritesContract } from "../testing/retried-writes.contract.ts";
import { elasticsearchTestSpace } from "../testing/elasticsearch-test-support.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";

describeWithEngine("ELASTICSEARCH_URL", "Elasticsearch writes sent again by the client", (url) => {
  describeRetriedWritesContract("Elasticsearch", async () => {
    const space = elasticsearchTestSpace(url);
    return {
      url,
      storeAt(node) {
        const client = new Client({ node, maxRetries: 3 });
        return { store: new ElasticsearchDocumentStore(client), close: () => client.close() };
      },
      index: `${space.prefix}records`,
      cleanup: () => space.cleanup(),
    };
  });
});
