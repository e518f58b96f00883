// The stores the answer layer keeps in the index: assistants and conversations, beside the catalog.
// On OpenSearch and Elasticsearch each has an index of its own next to <prefix>-api-keys.
import type { AssistantStore } from "../assistants/assistant-store.ts";
import type { ConversationStore } from "../conversations/conversation-store.ts";
import { DocumentStoreAssistantStore } from "./document-store-assistant-store.ts";
import { DocumentStoreConversationStore } from "./document-store-conversation-store.ts";
import type { DocumentStorePort } from "./document-store-port.ts";
import { DocumentStoreSourceStore } from "./document-store-source-store.ts";
import type { SourceStore } from "../sources/source-store.ts";

export interface AnswerStores {
  assistants: AssistantStore;
  conversations: ConversationStore;
  /** Sources kept in sync and their cursors (not the answer layer's, but stored the same way). */
  sources: SourceStore;
}

export function documentStoreAnswerStores(store: DocumentStorePort, indexPrefix: string, replicas?: number): AnswerStores {
  return {
    assistants: new DocumentStoreAssistantStore(store, `${indexPrefix}-assistants`, replicas),
    conversations: new DocumentStoreConversationStore(store, `${indexPrefix}-conversations`, replicas),
    sources: new DocumentStoreSourceStore(store, `${indexPrefix}-sources`, replicas),
  };
}
