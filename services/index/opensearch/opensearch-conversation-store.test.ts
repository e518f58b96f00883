import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeRecordStoresContract } from "../testing/conversation-store.contract.ts";
import { DocumentStoreAssistantStore } from "../document-store/document-store-assistant-store.ts";
import { DocumentStoreConversationStore } from "../document-store/document-store-conversation-store.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";
import { openSearchTestSpace } from "../testing/opensearch-test-support.ts";

describeWithEngine("OPENSEARCH_URL", "assistant and conversation stores on OpenSearch", (url) => {
  describeRecordStoresContract("OpenSearch", async () => {
    const space = openSearchTestSpace(url);
    const store = new OpenSearchDocumentStore(space.client);
    return {
      assistants: new DocumentStoreAssistantStore(store, `${space.prefix}assistants`),
      conversations: new DocumentStoreConversationStore(store, `${space.prefix}conversations`),
      cleanup: () => space.cleanup(),
    };
  });
});
