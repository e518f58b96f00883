// The public assistant, conversation and turn RPCs: relays to the index, which keeps them.
import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { Assistant } from "../gen/quarry/common/v1/assistant_pb.ts";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";

type ConversationMethods = Pick<
  ServiceImpl<typeof QuarryService>,
  | "createAssistant"
  | "getAssistant"
  | "listAssistants"
  | "updateAssistant"
  | "listConversations"
  | "getConversation"
  | "deleteConversation"
  | "getTurn"
>;

export function conversationHandlers(index: Client<typeof IndexService>): ConversationMethods {
  return {
    async createAssistant(request) {
      return { assistant: (await index.createAssistant({ assistant: withoutCorrections(request.assistant) })).assistant };
    },
    async getAssistant(request) {
      return { assistant: (await index.getAssistant({ assistant: request.assistant })).assistant };
    },
    async listAssistants() {
      return { assistants: (await index.listAssistants({})).assistants };
    },
    async updateAssistant(request) {
      return { assistant: (await index.updateAssistant({ assistant: request.assistant, update: withoutCorrections(request.update) })).assistant };
    },
    async listConversations(request) {
      const assistantId = request.assistant ? (await index.getAssistant({ assistant: request.assistant })).assistant!.id : "";
      return { conversations: (await index.listConversations({ assistantId })).conversations };
    },
    async getConversation(request) {
      const res = await index.getConversation({ conversationId: request.conversationId, includeTurns: true });
      return { conversation: res.conversation, turns: res.turns };
    },
    async deleteConversation(request) {
      await index.deleteConversation({ conversationId: request.conversationId });
      return {};
    },
    async getTurn(request) {
      return { turn: (await index.getTurn({ turnId: request.turnId })).turn };
    },
  };
}

/** The corrections base is Quarry's (CorrectAnswer sets it); a caller's value is ignored, so the stored one stays. */
function withoutCorrections(assistant: Assistant | undefined): Assistant | undefined {
  return assistant && { ...assistant, correctionsKnowledgeBaseId: "" };
}
