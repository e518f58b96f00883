// The index's conversation and turn RPCs: protobuf ↔ ConversationRegistry (conversation-proto.ts maps).
import type { ServiceImpl } from "@connectrpc/connect";
import type { IndexService } from "../../../gen/quarry/index/v1/index_pb.ts";
import { conversationToProto, turnFromProto, turnToProto } from "./conversation-proto.ts";
import type { ConversationRegistry } from "./conversation-registry.ts";

type ConversationMethods = Pick<
  ServiceImpl<typeof IndexService>,
  "createConversation" | "getConversation" | "listConversations" | "deleteConversation" | "saveTurn" | "getTurn"
>;

export function conversationHandlers(conversations: ConversationRegistry): ConversationMethods {
  return {
    async createConversation(request) {
      return { conversation: conversationToProto(await conversations.create({ title: request.title, assistantId: request.assistantId, knowledgeBaseIds: [...request.knowledgeBaseIds] })) };
    },
    async getConversation(request) {
      const { conversation, turns } = await conversations.get(request.conversationId, request.includeTurns, request.lastTurns);
      return { conversation: conversationToProto(conversation), turns: turns.map(turnToProto) };
    },
    async listConversations(request) {
      return { conversations: (await conversations.list(request.assistantId)).map(conversationToProto) };
    },
    async deleteConversation(request) {
      await conversations.delete(request.conversationId);
      return {};
    },
    async saveTurn(request) {
      return { turn: turnToProto(await conversations.saveTurn(request.turn && turnFromProto(request.turn))) };
    },
    async getTurn(request) {
      return { turn: turnToProto(await conversations.getTurn(request.turnId)) };
    },
  };
}
