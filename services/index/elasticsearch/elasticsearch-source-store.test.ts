import { describeWithEngine } from "../../../test/support/engines.ts";
import { DocumentStoreSourceStore } from "../document-store/document-store-source-store.ts";
import { describeSourceStoreContract } from "../testing/source-store.contract.ts";
import { elasticsearchTestSpace } from "../testing/elasticsearch-test-support.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";

describeWithEngine("ELASTICSEARCH_URL", "source store on Elasticsearch", (url) => {
  describeSourceStoreContract("Elasticsearch", async () => {
    const space = elasticsearchTestSpace(url);
    return { sources: new DocumentStoreSourceStore(new ElasticsearchDocumentStore(space.client), `${space.prefix}sources`), cleanup: () => space.cleanup() };
  });
});
