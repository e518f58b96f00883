// Assistants on the catalog's search engine (OpenSearch or Elasticsearch, through
// document-store-port.ts), in an index of their own (<prefix>-assistants). A name is reserved the
// way an API key's is: a record whose id derives from the name, which the engine creates only once.
// The configuration is an object the engine keeps in _source without indexing (enabled: false).
import { createHash } from "node:crypto";
import { NotFoundError } from "../../../lib/errors.ts";
import type { AssistantStore, StoredAssistant } from "../assistants/assistant-store.ts";
import type { JsonObject } from "../../../lib/domain.ts";
import { MAX_LISTED } from "./catalog-documents.ts";
import { deleteRecord, findRecord, type DocumentStorePort } from "./document-store-port.ts";
import { recordMappings, RecordStore } from "./record-index.ts";

interface AssistantSource {
  record_type: "assistant";
  id: string;
  name: string;
  created_at: number;
  updated_at: number;
  config: JsonObject;
}

interface AssistantNameSource {
  record_type: "assistant_name";
  id: string;
  name: string;
}

const MAPPINGS = recordMappings({
  name: { type: "keyword" },
  created_at: { type: "long" },
  updated_at: { type: "long" },
  config: { type: "object", enabled: false },
});

const recordId = (id: string) => `assistant:${id}`;
// Hashed: a name can be longer than the engines' 512-byte id limit.
const nameRecordId = (name: string) => `assistant-name:${createHash("sha256").update(name).digest("hex")}`;

const toStored = (s: AssistantSource): StoredAssistant => ({
  id: s.id,
  name: s.name,
  createdAt: new Date(s.created_at),
  updatedAt: new Date(s.updated_at),
  config: s.config,
});

export class DocumentStoreAssistantStore extends RecordStore implements AssistantStore {
  /** replicas unset: one replica where the cluster has a second data node (index-replication.ts). */
  constructor(store: DocumentStorePort, index: string, replicas?: number) {
    super(store, index, MAPPINGS, replicas);
  }

  async create(a: StoredAssistant): Promise<StoredAssistant> {
    return this.records.call("create assistant", async () => {
      await this.reserve(a.name, a.id);
      const source: AssistantSource = { record_type: "assistant", id: a.id, name: a.name, created_at: a.createdAt.getTime(), updated_at: a.updatedAt.getTime(), config: a.config };
      try {
        await this.store.create(this.index, recordId(a.id), source);
      } catch (error) {
        await deleteRecord(this.store, this.index, nameRecordId(a.name)).catch(() => undefined);
        throw error;
      }
      return toStored(source);
    });
  }

  async get(idOrName: string): Promise<StoredAssistant> {
    return this.records.call("get assistant", async () => toStored((await this.find(idOrName)).source));
  }

  async list(): Promise<StoredAssistant[]> {
    return this.records.call("list assistants", async () => {
      const result = await this.store.search<AssistantSource>(this.index, { size: MAX_LISTED, query: { term: { record_type: "assistant" } }, sort: [{ name: "asc" }] });
      return result.hits.map((hit) => toStored(hit._source!));
    });
  }

  async update(id: string, next: Pick<StoredAssistant, "name" | "config" | "updatedAt">): Promise<StoredAssistant> {
    return this.records.call("update assistant", async () => {
      const found = await findRecord<AssistantSource>(this.store, this.index, recordId(id));
      if (!found) throw new NotFoundError(`no assistant has the id ${id}`);
      const renamed = found.source.name !== next.name;
      if (renamed) await this.reserve(next.name, id);
      const source: AssistantSource = { ...found.source, name: next.name, config: next.config, updated_at: next.updatedAt.getTime() };
      try {
        await this.store.put(this.index, recordId(id), source, { refresh: true, ifUnchanged: found });
      } catch (error) {
        if (renamed) await deleteRecord(this.store, this.index, nameRecordId(next.name)).catch(() => undefined);
        throw error;
      }
      if (renamed) await deleteRecord(this.store, this.index, nameRecordId(found.source.name));
      return toStored(source);
    });
  }

  async delete(idOrName: string): Promise<StoredAssistant> {
    return this.records.call("delete assistant", async () => {
      const found = await this.find(idOrName);
      if (!(await deleteRecord(this.store, this.index, recordId(found.source.id)))) throw new NotFoundError(`no assistant has the id or name ${idOrName}`);
      await deleteRecord(this.store, this.index, nameRecordId(found.source.name));
      return toStored(found.source);
    });
  }

  private reserve(name: string, id: string): Promise<void> {
    const reservation: AssistantNameSource = { record_type: "assistant_name", id, name };
    return this.records.reserve(nameRecordId(name), { ...reservation }, `an assistant named "${name}" already exists`);
  }

  private async find(idOrName: string) {
    const found = await this.records.findByIdOrName<AssistantSource>(recordId, nameRecordId, idOrName);
    if (!found) throw new NotFoundError(`no assistant has the id or name ${idOrName}`);
    return found;
  }
}
