// Conversations and their turns: the rules around the store. The index numbers turns and keeps
// each as the Turn message the answer service sent (as protobuf JSON, so fields added later read
// back); it never interprets a turn's provenance.
import { randomBytes } from "node:crypto";
import { create, fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { TurnSchema, type Turn } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { ConversationSchema, type Conversation } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import type { ConversationStore, StoredConversation, StoredTurn } from "./conversation-store.ts";

const TITLE_CHARS = 80;

export class ConversationRegistry {
  constructor(private readonly store: ConversationStore) {}

  async create(input: { title: string; assistantId: string; knowledgeBaseIds: string[] }): Promise<Conversation> {
    if (input.knowledgeBaseIds.length === 0) throw new InvalidInputError("a conversation needs the knowledge bases it searches");
    const now = new Date();
    const title = input.title.replace(/\s+/g, " ").trim();
    return toConversation(
      await this.store.create({
        id: `cv_${randomBytes(10).toString("hex")}`,
        title: title.length > TITLE_CHARS ? `${title.slice(0, TITLE_CHARS - 1)}…` : title,
        assistantId: input.assistantId,
        knowledgeBaseIds: [...input.knowledgeBaseIds],
        createdAt: now,
        updatedAt: now,
      }),
    );
  }

  async get(id: string, includeTurns: boolean, lastTurns = 0): Promise<{ conversation: Conversation; turns: Turn[] }> {
    const conversation = toConversation(await this.store.get(checkId(id, "conversation")));
    return { conversation, turns: includeTurns ? (await this.store.turns(conversation.id, lastTurns ? { last: lastTurns } : {})).map(toTurn) : [] };
  }

  async list(assistantId = ""): Promise<Conversation[]> {
    return (await this.store.list(assistantId ? { assistantId } : {})).map(toConversation);
  }

  delete(id: string): Promise<void> {
    return this.store.delete(checkId(id, "conversation"));
  }

  async saveTurn(turn: Turn | undefined): Promise<Turn> {
    if (!turn?.id.trim()) throw new InvalidInputError("a turn needs its id");
    checkId(turn.conversationId, "conversation");
    const createdAt = turn.createdAt ? timestampDate(turn.createdAt) : new Date();
    const body = toJson(TurnSchema, create(TurnSchema, { ...turn, number: 0, createdAt: undefined })) as JsonObject;
    return toTurn(await this.store.appendTurn({ id: turn.id, conversationId: turn.conversationId, createdAt, body }));
  }

  async getTurn(id: string): Promise<Turn> {
    return toTurn(await this.store.getTurn(checkId(id, "turn")));
  }
}

function checkId(id: string, what: string): string {
  if (!id.trim()) throw new InvalidInputError(`name the ${what} (its id)`);
  return id.trim();
}

function toConversation(c: StoredConversation): Conversation {
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

function toTurn(t: StoredTurn): Turn {
  const turn = fromJson(TurnSchema, t.body as JsonObject, { ignoreUnknownFields: true });
  turn.id = t.id;
  turn.conversationId = t.conversationId;
  turn.number = t.number;
  turn.createdAt = timestampFromDate(t.createdAt);
  return turn;
}
