// Conversations and their turns: the rules around the store. The index numbers turns and keeps
// each as the answer service sent it (its content as protobuf JSON, so fields added later read
// back: conversation-proto.ts); it never interprets a turn's provenance.
import { randomBytes } from "node:crypto";
import type { Conversation, Turn } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import type { ConversationStore } from "./conversation-store.ts";

const TITLE_CHARS = 80;

export class ConversationRegistry {
  constructor(private readonly store: ConversationStore) {}

  async create(input: { title: string; assistantId: string; knowledgeBaseIds: string[] }): Promise<Conversation> {
    if (input.knowledgeBaseIds.length === 0) throw new InvalidInputError("a conversation needs the knowledge bases it searches");
    const now = new Date();
    const title = input.title.replace(/\s+/g, " ").trim();
    return this.store.create({
      id: `cv_${randomBytes(10).toString("hex")}`,
      title: title.length > TITLE_CHARS ? `${title.slice(0, TITLE_CHARS - 1)}…` : title,
      assistantId: input.assistantId,
      knowledgeBaseIds: [...input.knowledgeBaseIds],
      createdAt: now,
      updatedAt: now,
    });
  }

  async get(id: string, includeTurns: boolean, lastTurns = 0): Promise<{ conversation: Conversation; turns: Turn[] }> {
    const conversation = await this.store.get(checkId(id, "conversation"));
    return { conversation, turns: includeTurns ? await this.store.turns(conversation.id, lastTurns ? { last: lastTurns } : {}) : [] };
  }

  list(assistantId = ""): Promise<Conversation[]> {
    return this.store.list(assistantId ? { assistantId } : {});
  }

  delete(id: string): Promise<void> {
    return this.store.delete(checkId(id, "conversation"));
  }

  /** The turn's number is the store's to give; a number the sender set is ignored. */
  async saveTurn(turn: Omit<Turn, "number"> | undefined): Promise<Turn> {
    if (!turn?.id.trim()) throw new InvalidInputError("a turn needs its id");
    checkId(turn.conversationId, "conversation");
    return this.store.appendTurn({ id: turn.id, conversationId: turn.conversationId, createdAt: turn.createdAt, body: turn.body });
  }

  async getTurn(id: string): Promise<Turn> {
    return this.store.getTurn(checkId(id, "turn"));
  }
}

function checkId(id: string, what: string): string {
  if (!id.trim()) throw new InvalidInputError(`name the ${what} (its id)`);
  return id.trim();
}
