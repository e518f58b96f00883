// Conversations and their turns in the index's SQLite file; the tables are created by the store.
// A turn is numbered inside the same transaction that counts it, so concurrent turns never share a number.
import { NotFoundError } from "../../../lib/errors.ts";
import type { ConversationStore, StoredConversation, StoredTurn } from "../conversations/conversation-store.ts";
import type { SqliteDatabase } from "./open-database.ts";
import { withDatabase } from "./sqlite-errors.ts";

interface ConversationRow {
  id: string;
  title: string;
  assistant_id: string;
  knowledge_base_ids: string;
  turn_count: number;
  created_at: number;
  updated_at: number;
}

interface TurnRow {
  id: string;
  conversation_id: string;
  number: number;
  body: string;
  created_at: number;
}

const toConversation = (row: ConversationRow): StoredConversation => ({
  id: row.id,
  title: row.title,
  assistantId: row.assistant_id,
  knowledgeBaseIds: JSON.parse(row.knowledge_base_ids) as string[],
  turnCount: row.turn_count,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const toTurn = (row: TurnRow): StoredTurn => ({
  id: row.id,
  conversationId: row.conversation_id,
  number: row.number,
  createdAt: new Date(row.created_at),
  body: JSON.parse(row.body) as StoredTurn["body"],
});

const missing = (id: string) => new NotFoundError(`no conversation has the id ${id}`);

export class SqliteConversationStore implements ConversationStore {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS conversations (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        assistant_id TEXT NOT NULL,
        knowledge_base_ids TEXT NOT NULL,
        turn_count INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS conversations_by_update ON conversations (updated_at);
      CREATE TABLE IF NOT EXISTS conversation_turns (
        id TEXT PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (conversation_id, number)
      );
    `);
  }

  async create(c: Omit<StoredConversation, "turnCount">): Promise<StoredConversation> {
    return withDatabase(this.db, "create conversation", () => {
      this.db
        .prepare("INSERT INTO conversations (id, title, assistant_id, knowledge_base_ids, turn_count, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)")
        .run(c.id, c.title, c.assistantId, JSON.stringify(c.knowledgeBaseIds), c.createdAt.getTime(), c.updatedAt.getTime());
      return { ...c, knowledgeBaseIds: [...c.knowledgeBaseIds], turnCount: 0 };
    });
  }

  async get(id: string): Promise<StoredConversation> {
    return withDatabase(this.db, "get conversation", () => {
      const row = this.db.prepare("SELECT * FROM conversations WHERE id = ?").get(id) as ConversationRow | undefined;
      if (!row) throw missing(id);
      return toConversation(row);
    });
  }

  async list(filter: { assistantId?: string } = {}): Promise<StoredConversation[]> {
    return withDatabase(this.db, "list conversations", () => {
      const rows = filter.assistantId
        ? this.db.prepare("SELECT * FROM conversations WHERE assistant_id = ? ORDER BY updated_at DESC, id").all(filter.assistantId)
        : this.db.prepare("SELECT * FROM conversations ORDER BY updated_at DESC, id").all();
      return (rows as ConversationRow[]).map(toConversation);
    });
  }

  async delete(id: string): Promise<void> {
    return withDatabase(this.db, "delete conversation", () => {
      // The turns go explicitly too: foreign keys may be off on a connection opened elsewhere.
      const gone = this.db.transaction(() => {
        this.db.prepare("DELETE FROM conversation_turns WHERE conversation_id = ?").run(id);
        return this.db.prepare("DELETE FROM conversations WHERE id = ?").run(id).changes;
      })();
      if (gone === 0) throw missing(id);
    });
  }

  async appendTurn(turn: Omit<StoredTurn, "number">): Promise<StoredTurn> {
    return withDatabase(this.db, "save turn", () =>
      this.db.transaction(() => {
        const row = this.db
          .prepare("UPDATE conversations SET turn_count = turn_count + 1, updated_at = MAX(updated_at, ?) WHERE id = ? RETURNING turn_count")
          .get(turn.createdAt.getTime(), turn.conversationId) as { turn_count: number } | undefined;
        if (!row) throw missing(turn.conversationId);
        this.db
          .prepare("INSERT INTO conversation_turns (id, conversation_id, number, body, created_at) VALUES (?, ?, ?, ?, ?)")
          .run(turn.id, turn.conversationId, row.turn_count, JSON.stringify(turn.body), turn.createdAt.getTime());
        return { ...turn, number: row.turn_count };
      }).immediate(),
    );
  }

  async turns(conversationId: string, options: { last?: number } = {}): Promise<StoredTurn[]> {
    return withDatabase(this.db, "list turns", () => {
      const rows = options.last
        ? (this.db.prepare("SELECT * FROM conversation_turns WHERE conversation_id = ? ORDER BY number DESC LIMIT ?").all(conversationId, options.last) as TurnRow[]).reverse()
        : (this.db.prepare("SELECT * FROM conversation_turns WHERE conversation_id = ? ORDER BY number").all(conversationId) as TurnRow[]);
      return rows.map(toTurn);
    });
  }

  async getTurn(id: string): Promise<StoredTurn> {
    return withDatabase(this.db, "get turn", () => {
      const row = this.db.prepare("SELECT * FROM conversation_turns WHERE id = ?").get(id) as TurnRow | undefined;
      if (!row) throw new NotFoundError(`no turn has the id ${id}`);
      return toTurn(row);
    });
  }
}
