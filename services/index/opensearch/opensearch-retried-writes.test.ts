// The cluster fault run's failure, reproduced on one node: a write whose answer is lost after the
// record was written (a node cut off mid-call) is sent again by the OpenSearch client, and the second
// try's 409 must not fail the write (a chat turn died of "version conflict, document already exists").
import { Client } from "@opensearch-project/opensearch";
import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeRetriedWritesContract } from "../testing/retried-writes.contract.ts";
import { openSearchTestSpace } from "../testing/opensearch-test-support.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";

describeWithEngine("OPENSEARCH_URL", "OpenSearch writes sent again by the client", (url) => {
  describeRetriedWritesContract("OpenSearch", async () => {
    const space = openSearchTestSpace(url);
    return {
      url,
      storeAt(node) {
        const client = new Client({ node, maxRetries: 3 });
        return { store: new OpenSearchDocumentStore(client), close: () => client.close() };
      },
      index: `${space.prefix}records`,
      cleanup: () => space.cleanup(),
    };
  });
});
