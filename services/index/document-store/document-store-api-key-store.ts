// API keys on the catalog's search engine (OpenSearch or Elasticsearch, through
// document-store-port.ts), in an index of their own beside the catalog (<prefix>-api-keys): the
// catalog index's mapping is strict and already deployed, so key records get their own mapping
// rather than fields added to it. A key's name is reserved the way a knowledge base's is: a record
// whose id derives from the name, which the engine can create only once.
import { createHash } from "node:crypto";
import type { ApiKeyRecord, ApiKeyRole } from "../../../lib/auth/api-key.ts";
import { NotFoundError } from "../../../lib/errors.ts";
import type { ApiKeyStore, StoredApiKey } from "../keys/api-key-store.ts";
import { MAX_LISTED } from "./catalog-documents.ts";
import { deleteRecord, findRecord, type DocumentStorePort } from "./document-store-port.ts";
import { recordMappings, RecordStore } from "./record-index.ts";

interface ApiKeySource {
  record_type: "api_key";
  id: string;
  name: string;
  role: ApiKeyRole;
  knowledge_base_ids: string[];
  key_hash: string;
  created_at: number;
}

interface ApiKeyNameSource {
  record_type: "api_key_name";
  id: string;
  name: string;
}

const MAPPINGS = recordMappings({
  name: { type: "keyword" },
  role: { type: "keyword" },
  knowledge_base_ids: { type: "keyword" },
  key_hash: { type: "keyword", index: false },
  created_at: { type: "long" },
});

const keyRecordId = (id: string) => `key:${id}`;
// Hashed: a name can be longer than the engines' 512-byte id limit.
const nameRecordId = (name: string) => `key-name:${createHash("sha256").update(name).digest("hex")}`;

const toRecord = (s: ApiKeySource): ApiKeyRecord => ({
  id: s.id,
  name: s.name,
  role: s.role,
  knowledgeBaseIds: [...s.knowledge_base_ids],
  createdAt: new Date(s.created_at),
});

export class DocumentStoreApiKeyStore extends RecordStore implements ApiKeyStore {
  /** replicas unset: one replica where the cluster has a second data node (index-replication.ts). */
  constructor(store: DocumentStorePort, index: string, replicas?: number) {
    super(store, index, MAPPINGS, replicas);
  }

  async create(key: StoredApiKey): Promise<ApiKeyRecord> {
    return this.records.call("create API key", async () => {
      const reservation: ApiKeyNameSource = { record_type: "api_key_name", id: key.id, name: key.name };
      await this.records.reserve(nameRecordId(key.name), { ...reservation }, `an API key named "${key.name}" already exists`);
      const source: ApiKeySource = {
        record_type: "api_key",
        id: key.id,
        name: key.name,
        role: key.role,
        knowledge_base_ids: key.knowledgeBaseIds,
        key_hash: key.keyHash,
        created_at: key.createdAt.getTime(),
      };
      try {
        await this.store.create(this.index, keyRecordId(key.id), source);
      } catch (error) {
        await this.store.delete(this.index, nameRecordId(key.name)).catch(() => undefined);
        throw error;
      }
      return toRecord(source);
    });
  }

  async list(): Promise<ApiKeyRecord[]> {
    return this.records.call("list API keys", async () => {
      const result = await this.store.search<ApiKeySource>(this.index, {
        size: MAX_LISTED,
        query: { term: { record_type: "api_key" } },
        sort: [{ created_at: "asc" }, { name: "asc" }],
      });
      return result.hits.map((hit) => toRecord(hit._source!));
    });
  }

  async find(id: string): Promise<StoredApiKey | undefined> {
    return this.records.call("find API key", async () => {
      const found = await findRecord<ApiKeySource>(this.store, this.index, keyRecordId(id));
      return found && { ...toRecord(found.source), keyHash: found.source.key_hash };
    });
  }

  async revoke(idOrName: string): Promise<ApiKeyRecord> {
    return this.records.call("revoke API key", async () => {
      const found = await this.records.findByIdOrName<ApiKeySource>(keyRecordId, nameRecordId, idOrName);
      if (!found || !(await deleteRecord(this.store, this.index, keyRecordId(found.source.id)))) {
        throw new NotFoundError(`no API key has the id or name ${idOrName}`);
      }
      await deleteRecord(this.store, this.index, nameRecordId(found.source.name));
      return toRecord(found.source);
    });
  }
}
