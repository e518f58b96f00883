// Conversations and their turns on the catalog's search engine (OpenSearch or Elasticsearch,
// through document-store-port.ts), in one index of their own (<prefix>-conversations): a record
// per conversation and one per turn. A turn takes its number by bumping the conversation's count
// with a conditional write (retried when another turn got there first), so concurrent turns never
// share a number. A turn's document is kept in _source without being indexed (enabled: false).
import { NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import type { JsonObject } from "../../../lib/domain.ts";
import { MAX_LISTED } from "./catalog-documents.ts";
import type { ConversationStore, StoredConversation, StoredTurn } from "../conversations/conversation-store.ts";
import { findRecord, type DocumentStorePort } from "./document-store-port.ts";
import { recordMappings, RecordStore } from "./record-index.ts";

interface ConversationSource {
  record_type: "conversation";
  id: string;
  title: string;
  assistant_id: string;
  knowledge_base_ids: string[];
  turn_count: number;
  created_at: number;
  updated_at: number;
}

interface TurnSource {
  record_type: "turn";
  id: string;
  conversation_id: string;
  number: number;
  created_at: number;
  body: JsonObject;
}

const MAPPINGS = recordMappings({
  conversation_id: { type: "keyword" },
  title: { type: "keyword", index: false },
  assistant_id: { type: "keyword" },
  knowledge_base_ids: { type: "keyword" },
  turn_count: { type: "integer" },
  number: { type: "integer" },
  created_at: { type: "long" },
  updated_at: { type: "long" },
  body: { type: "object", enabled: false },
});

const conversationRecordId = (id: string) => `conversation:${id}`;
const turnRecordId = (id: string) => `turn:${id}`;
/** Conditional writes lost to a concurrent turn are retried this often before giving up. */
const MAX_NUMBERING_ATTEMPTS = 20;

const toConversation = (s: ConversationSource): StoredConversation => ({
  id: s.id,
  title: s.title,
  assistantId: s.assistant_id,
  knowledgeBaseIds: [...s.knowledge_base_ids],
  turnCount: s.turn_count,
  createdAt: new Date(s.created_at),
  updatedAt: new Date(s.updated_at),
});

const toTurn = (s: TurnSource): StoredTurn => ({ id: s.id, conversationId: s.conversation_id, number: s.number, createdAt: new Date(s.created_at), body: s.body });

const missing = (id: string) => new NotFoundError(`no conversation has the id ${id}`);

export class DocumentStoreConversationStore extends RecordStore implements ConversationStore {
  /** replicas unset: one replica where the cluster has a second data node (index-replication.ts). */
  constructor(store: DocumentStorePort, index: string, replicas?: number) {
    super(store, index, MAPPINGS, replicas);
  }

  async create(c: Omit<StoredConversation, "turnCount">): Promise<StoredConversation> {
    return this.records.call("create conversation", async () => {
      const source: ConversationSource = {
        record_type: "conversation",
        id: c.id,
        title: c.title,
        assistant_id: c.assistantId,
        knowledge_base_ids: [...c.knowledgeBaseIds],
        turn_count: 0,
        created_at: c.createdAt.getTime(),
        updated_at: c.updatedAt.getTime(),
      };
      await this.store.create(this.index, conversationRecordId(c.id), source);
      return toConversation(source);
    });
  }

  async get(id: string): Promise<StoredConversation> {
    return this.records.call("get conversation", async () => {
      const found = await findRecord<ConversationSource>(this.store, this.index, conversationRecordId(id));
      if (!found) throw missing(id);
      return toConversation(found.source);
    });
  }

  async list(filter: { assistantId?: string } = {}): Promise<StoredConversation[]> {
    return this.records.call("list conversations", async () => {
      const must: Record<string, unknown>[] = [{ term: { record_type: "conversation" } }];
      if (filter.assistantId) must.push({ term: { assistant_id: filter.assistantId } });
      const result = await this.store.search<ConversationSource>(this.index, { size: MAX_LISTED, query: { bool: { filter: must } }, sort: [{ updated_at: "desc" }, { id: "asc" }] });
      return result.hits.map((hit) => toConversation(hit._source!));
    });
  }

  async delete(id: string): Promise<void> {
    return this.records.call("delete conversation", async () => {
      const found = await findRecord<ConversationSource>(this.store, this.index, conversationRecordId(id));
      if (!found) throw missing(id);
      // Turns first: a conversation record without turns is harmless if the second step fails, turns without one are not reachable.
      await this.store.deleteWhere("delete the conversation's turns", this.index, { bool: { filter: [{ term: { record_type: "turn" } }, { term: { conversation_id: id } }] } }, { refresh: true });
      await this.store.deleteWhere("delete conversation", this.index, { ids: { values: [conversationRecordId(id)] } }, { refresh: true, alsoIds: [conversationRecordId(id)] });
    });
  }

  async appendTurn(turn: Omit<StoredTurn, "number">): Promise<StoredTurn> {
    return this.records.call("save turn", async () => {
      for (let attempt = 0; attempt < MAX_NUMBERING_ATTEMPTS; attempt++) {
        const found = await findRecord<ConversationSource>(this.store, this.index, conversationRecordId(turn.conversationId));
        if (!found) throw missing(turn.conversationId);
        const number = found.source.turn_count + 1;
        const next: ConversationSource = { ...found.source, turn_count: number, updated_at: Math.max(found.source.updated_at, turn.createdAt.getTime()) };
        try {
          await this.store.put(this.index, conversationRecordId(turn.conversationId), next, { refresh: true, ifUnchanged: found });
        } catch (error) {
          if (this.store.errors.isResponseError(error, 409)) continue;
          throw error;
        }
        const source: TurnSource = { record_type: "turn", id: turn.id, conversation_id: turn.conversationId, number, created_at: turn.createdAt.getTime(), body: turn.body };
        await this.store.create(this.index, turnRecordId(turn.id), source);
        return toTurn(source);
      }
      throw new UnavailableError(`save turn: conversation ${turn.conversationId} kept changing; try again`);
    });
  }

  async turns(conversationId: string, options: { last?: number } = {}): Promise<StoredTurn[]> {
    return this.records.call("list turns", async () => {
      const result = await this.store.search<TurnSource>(this.index, {
        size: options.last ? Math.min(options.last, MAX_LISTED) : MAX_LISTED,
        query: { bool: { filter: [{ term: { record_type: "turn" } }, { term: { conversation_id: conversationId } }] } },
        sort: [{ number: options.last ? "desc" : "asc" }],
      });
      const turns = result.hits.map((hit) => toTurn(hit._source!));
      return options.last ? turns.reverse() : turns;
    });
  }

  async getTurn(id: string): Promise<StoredTurn> {
    return this.records.call("get turn", async () => {
      const found = await findRecord<TurnSource>(this.store, this.index, turnRecordId(id));
      if (!found) throw new NotFoundError(`no turn has the id ${id}`);
      return toTurn(found.source);
    });
  }
}
