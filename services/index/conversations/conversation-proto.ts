// Conversations and turns ↔ their protobuf messages (quarry.common.v1.Conversation,
// quarry.answer.v1.Turn), the one mapping. A turn's content stays the answer service's Turn as
// protobuf JSON (lib/domain.ts Turn.body): the index numbers and dates it, never reads it.
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { TurnSchema, type Turn as TurnProto } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { ConversationSchema, type Conversation as ConversationProto } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import type { Conversation, JsonObject, Turn } from "../../../lib/domain.ts";

export function conversationToProto(c: Conversation): ConversationProto {
  return create(ConversationSchema, {
    id: c.id,
    title: c.title,
    assistantId: c.assistantId,
    knowledgeBaseIds: c.knowledgeBaseIds,
    turnCount: c.turnCount,
    createdAt: timestampFromDate(c.createdAt),
    updatedAt: timestampFromDate(c.updatedAt),
  });
}

export function turnToProto(t: Turn): TurnProto {
  const turn = fromJson(TurnSchema, t.body as never, { ignoreUnknownFields: true });
  turn.id = t.id;
  turn.conversationId = t.conversationId;
  turn.number = t.number;
  turn.createdAt = timestampFromDate(t.createdAt);
  return turn;
}

/** A turn to save: its number is the store's to give (0 here), its time now when the sender set none. */
export function turnFromProto(p: TurnProto): Turn {
  const body = toJson(TurnSchema, create(TurnSchema, { ...p, number: 0, createdAt: undefined })) as JsonObject;
  return { id: p.id, conversationId: p.conversationId, number: 0, createdAt: p.createdAt ? timestampDate(p.createdAt) : new Date(), body };
}
