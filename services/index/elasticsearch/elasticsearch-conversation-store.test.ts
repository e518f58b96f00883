import { describeWithEngine } from "../../../test/support/engines.ts";
import { describeRecordStoresContract } from "../testing/conversation-store.contract.ts";
import { DocumentStoreAssistantStore } from "../document-store/document-store-assistant-store.ts";
import { DocumentStoreConversationStore } from "../document-store/document-store-conversation-store.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";
import { elasticsearchTestSpace } from "../testing/elasticsearch-test-support.ts";

describeWithEngine("ELASTICSEARCH_URL", "assistant and conversation stores on Elasticsearch", (url) => {
  describeRecordStoresContract("Elasticsearch", async () => {
    const space = elasticsearchTestSpace(url);
    const store = new ElasticsearchDocumentStore(space.client);
    return {
      assistants: new DocumentStoreAssistantStore(store, `${space.prefix}assistants`),
      conversations: new DocumentStoreConversationStore(store, `${space.prefix}conversations`),
      cleanup: () => space.cleanup(),
    };
  });
});
