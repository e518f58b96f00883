// The ConversationPort over the index service's RPCs: assistants, conversations and turns live in
// the index's catalog (in embedded mode the same calls go through an in-memory transport).
import type { Client } from "@connectrpc/connect";
import type { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import type { ConversationPort } from "../chat-turn.ts";

export function indexConversations(index: Client<typeof IndexService>): ConversationPort {
  return {
    async getAssistant(idOrName) {
      return (await index.getAssistant({ assistant: idOrName })).assistant!;
    },
    async getConversation(id, lastTurns) {
      const res = await index.getConversation({ conversationId: id, includeTurns: true, lastTurns });
      return { conversation: res.conversation!, turns: res.turns };
    },
    async createConversation(input) {
      return (await index.createConversation(input)).conversation!;
    },
    async saveTurn(turn) {
      return (await index.saveTurn({ turn })).turn!;
    },
  };
}
