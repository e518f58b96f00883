// Where conversations and their turns are kept: beside the catalog, in the same backend (the
// index's SQLite file, or <prefix>-conversations on the search engine). A turn is a JSON document
// (the answer service's Turn, provenance included) the store keeps as given, numbered in its
// conversation. Implementations run conversation-store.contract.ts.
import type { JsonObject } from "../assistants/assistant-store.ts";

export interface StoredConversation {
  id: string;
  title: string;
  /** "" when the conversation named knowledge bases directly. */
  assistantId: string;
  knowledgeBaseIds: string[];
  turnCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface StoredTurn {
  id: string;
  conversationId: string;
  /** 1-based position in the conversation, given by the store. */
  number: number;
  createdAt: Date;
  body: JsonObject;
}

export interface ConversationStore {
  create(conversation: Omit<StoredConversation, "turnCount">): Promise<StoredConversation>;
  /** Throws NotFoundError. */
  get(id: string): Promise<StoredConversation>;
  /** Most recently updated first; only one assistant's when assistantId is given. */
  list(filter?: { assistantId?: string }): Promise<StoredConversation[]>;
  /** Deletes the conversation and its turns; throws NotFoundError. */
  delete(id: string): Promise<void>;
  /**
   * Numbers the turn after the conversation's last, stores it and moves the conversation's
   * updatedAt to the turn's time; NotFoundError when the conversation does not exist.
   */
  appendTurn(turn: Omit<StoredTurn, "number">): Promise<StoredTurn>;
  /** The conversation's turns, oldest first; only the last `last` of them when given. */
  turns(conversationId: string, options?: { last?: number }): Promise<StoredTurn[]>;
  /** Throws NotFoundError. */
  getTurn(id: string): Promise<StoredTurn>;
}
