// The records the index keeps beside the catalog on a document store: assistants and conversations
// (the answer layer's), and sources. On OpenSearch and Elasticsearch each has an index of its own
// next to <prefix>-api-keys.
import type { AssistantStore } from "../assistants/assistant-store.ts";
import type { ConversationStore } from "../conversations/conversation-store.ts";
import { DocumentStoreAssistantStore } from "./document-store-assistant-store.ts";
import { DocumentStoreConversationStore } from "./document-store-conversation-store.ts";
import type { DocumentStorePort } from "./document-store-port.ts";
import { DocumentStoreSourceStore } from "./document-store-source-store.ts";
import type { SourceStore } from "../sources/source-store.ts";

export interface RecordStores {
  assistants: AssistantStore;
  conversations: ConversationStore;
  /** Sources kept in sync and their cursors. */
  sources: SourceStore;
}

export function documentStoreRecordStores(store: DocumentStorePort, indexPrefix: string, replicas?: number): RecordStores {
  return {
    assistants: new DocumentStoreAssistantStore(store, `${indexPrefix}-assistants`, replicas),
    conversations: new DocumentStoreConversationStore(store, `${indexPrefix}-conversations`, replicas),
    sources: new DocumentStoreSourceStore(store, `${indexPrefix}-sources`, replicas),
  };
}
