import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeApiKeyStoreContract } from "../testing/api-key-store.contract.ts";
import { DocumentStoreApiKeyStore } from "../document-store/document-store-api-key-store.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";
import { openSearchTestSpace } from "../testing/opensearch-test-support.ts";

describeWithEngine("OPENSEARCH_URL", "DocumentStoreApiKeyStore on OpenSearch", (url) => {
  describeApiKeyStoreContract("OpenSearch", async () => {
    const space = openSearchTestSpace(url);
    return { store: new DocumentStoreApiKeyStore(new OpenSearchDocumentStore(space.client), `${space.prefix}api-keys`), cleanup: () => space.cleanup() };
  });
});
