import { describeWithEngine } from "../../../test/support/engines.ts";
import { DocumentStoreSourceStore } from "../document-store/document-store-source-store.ts";
import { describeSourceStoreContract } from "../testing/source-store.contract.ts";
import { openSearchTestSpace } from "../testing/opensearch-test-support.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";

describeWithEngine("OPENSEARCH_URL", "source store on OpenSearch", (url) => {
  describeSourceStoreContract("OpenSearch", async () => {
    const space = openSearchTestSpace(url);
    return { sources: new DocumentStoreSourceStore(new OpenSearchDocumentStore(space.client), `${space.prefix}sources`), cleanup: () => space.cleanup() };
  });
});
