// The index's assistant, conversation and turn RPCs: protobuf ↔ the registries.
import type { ServiceImpl } from "@connectrpc/connect";
import type { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import type { AssistantRegistry } from "../assistants/assistant-registry.ts";
import type { ConversationRegistry } from "./conversation-registry.ts";

type ConversationMethods = Pick<
  ServiceImpl<typeof IndexService>,
  | "createAssistant"
  | "getAssistant"
  | "listAssistants"
  | "updateAssistant"
  | "deleteAssistant"
  | "createConversation"
  | "getConversation"
  | "listConversations"
  | "deleteConversation"
  | "saveTurn"
  | "getTurn"
>;

export function conversationHandlers(assistants: AssistantRegistry, conversations: ConversationRegistry): ConversationMethods {
  return {
    async createAssistant(request) {
      if (!request.assistant) throw new InvalidInputError("send the assistant to create");
      return { assistant: await assistants.create(request.assistant) };
    },
    async getAssistant(request) {
      return { assistant: await assistants.get(request.assistant) };
    },
    async listAssistants() {
      return { assistants: await assistants.list() };
    },
    async updateAssistant(request) {
      if (!request.update) throw new InvalidInputError("send the assistant's new configuration");
      return { assistant: await assistants.update(request.assistant, request.update) };
    },
    async deleteAssistant(request) {
      await assistants.delete(request.assistant);
      return {};
    },
    async createConversation(request) {
      return { conversation: await conversations.create({ title: request.title, assistantId: request.assistantId, knowledgeBaseIds: [...request.knowledgeBaseIds] }) };
    },
    async getConversation(request) {
      return conversations.get(request.conversationId, request.includeTurns, request.lastTurns);
    },
    async listConversations(request) {
      return { conversations: await conversations.list(request.assistantId) };
    },
    async deleteConversation(request) {
      await conversations.delete(request.conversationId);
      return {};
    },
    async saveTurn(request) {
      return { turn: await conversations.saveTurn(request.turn) };
    },
    async getTurn(request) {
      return { turn: await conversations.getTurn(request.turnId) };
    },
  };
}
