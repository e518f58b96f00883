import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeApiKeyStoreContract } from "../testing/api-key-store.contract.ts";
import { DocumentStoreApiKeyStore } from "../document-store/document-store-api-key-store.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";
import { elasticsearchTestSpace } from "../testing/elasticsearch-test-support.ts";

describeWithEngine("ELASTICSEARCH_URL", "DocumentStoreApiKeyStore on Elasticsearch", (url) => {
  describeApiKeyStoreContract("Elasticsearch", async () => {
    const space = elasticsearchTestSpace(url);
    return { store: new DocumentStoreApiKeyStore(new ElasticsearchDocumentStore(space.client), `${space.prefix}api-keys`), cleanup: () => space.cleanup() };
  });
});
