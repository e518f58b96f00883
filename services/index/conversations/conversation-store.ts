// Where conversations and their turns are kept: beside the catalog, in the same backend (the
// index's SQLite file, or <prefix>-conversations on the search engine). A turn is a JSON document
// (the answer service's Turn, provenance included) the store keeps as given, numbered in its
// conversation. Implementations run conversation-store.contract.ts.
import type { Conversation, Turn } from "../../../lib/domain.ts";

/** The store keeps the domain's records as they are. */
export type StoredConversation = Conversation;
export type StoredTurn = Turn;

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
