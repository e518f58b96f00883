// Sources and their cursors on the catalog's search engine (OpenSearch or Elasticsearch, through
// document-store-port.ts), in an index of their own (<prefix>-sources). A name is reserved per base
// the way an assistant's is: a record whose id derives from base and name, created only once. The
// source's body is kept in _source without indexing; cursor items are records of their own, read
// back a page at a time (search_after), so a source may hold more items than one search returns.
import { createHash } from "node:crypto";
import { NotFoundError } from "../../../lib/errors.ts";
import type { JsonObject } from "../../../lib/domain.ts";
import type { SourceStore, StoredSource, StoredSourceItem } from "../sources/source-store.ts";
import { MAX_LISTED } from "./catalog-documents.ts";
import { deleteRecord, findRecord, type DocumentStorePort } from "./document-store-port.ts";
import { recordMappings, RecordStore } from "./record-index.ts";

interface SourceRecord {
  record_type: "source";
  id: string;
  knowledge_base_id: string;
  name: string;
  body: JsonObject;
}

interface NameRecord {
  record_type: "source_name";
  id: string;
  knowledge_base_id: string;
  name: string;
}

interface ItemRecord {
  record_type: "source_item";
  source_id: string;
  item_id: string;
  change_token: string;
  content_hash: string;
  document_id: string;
  file_name: string;
}

const MAPPINGS = recordMappings({
  knowledge_base_id: { type: "keyword" },
  name: { type: "keyword" },
  body: { type: "object", enabled: false },
  source_id: { type: "keyword" },
  item_id: { type: "keyword" },
  change_token: { type: "keyword", index: false },
  content_hash: { type: "keyword" },
  document_id: { type: "keyword" },
  file_name: { type: "keyword", index: false },
});

const digest = (...parts: string[]) => createHash("sha256").update(parts.join("\0")).digest("hex");
const recordId = (id: string) => `source:${id}`;
// Hashed: names and item ids (URLs) can be longer than the engines' 512-byte id limit.
const nameRecordId = (knowledgeBaseId: string, name: string) => `source-name:${digest(knowledgeBaseId, name)}`;
const itemRecordId = (sourceId: string, itemId: string) => `source-item:${digest(sourceId, itemId)}`;

const toStored = (s: SourceRecord): StoredSource => ({ id: s.id, knowledgeBaseId: s.knowledge_base_id, name: s.name, body: s.body });

export class DocumentStoreSourceStore extends RecordStore implements SourceStore {
  /** replicas unset: one replica where the cluster has a second data node (index-replication.ts). */
  constructor(store: DocumentStorePort, index: string, replicas?: number) {
    super(store, index, MAPPINGS, replicas);
  }

  async save(source: StoredSource): Promise<StoredSource> {
    return this.records.call("save source", async () => {
      const found = await findRecord<SourceRecord>(this.store, this.index, recordId(source.id));
      const renamed = !found || found.source.name !== source.name;
      if (renamed) await this.reserve(source);
      const record: SourceRecord = { record_type: "source", id: source.id, knowledge_base_id: source.knowledgeBaseId, name: source.name, body: source.body };
      try {
        await this.store.put(this.index, recordId(source.id), record, { refresh: true, ...(found ? { ifUnchanged: found } : {}) });
      } catch (error) {
        if (renamed) await deleteRecord(this.store, this.index, nameRecordId(source.knowledgeBaseId, source.name)).catch(() => undefined);
        throw error;
      }
      if (found && renamed) await deleteRecord(this.store, this.index, nameRecordId(found.source.knowledge_base_id, found.source.name));
      return source;
    });
  }

  async get(id: string): Promise<StoredSource> {
    return this.records.call("get source", async () => {
      const found = await findRecord<SourceRecord>(this.store, this.index, recordId(id));
      if (!found) throw new NotFoundError(`no source has the id ${id}`);
      return toStored(found.source);
    });
  }

  async list(knowledgeBaseId?: string): Promise<StoredSource[]> {
    return this.records.call("list sources", async () => {
      const filter: Record<string, unknown>[] = [{ term: { record_type: "source" } }];
      if (knowledgeBaseId) filter.push({ term: { knowledge_base_id: knowledgeBaseId } });
      const result = await this.store.search<SourceRecord>(this.index, { size: MAX_LISTED, query: { bool: { filter } }, sort: [{ name: "asc" }] });
      return result.hits.map((hit) => toStored(hit._source!));
    });
  }

  async delete(id: string): Promise<void> {
    await this.records.call("delete source", async () => {
      const found = await findRecord<SourceRecord>(this.store, this.index, recordId(id));
      if (!found) throw new NotFoundError(`no source has the id ${id}`);
      // Items are written unrefreshed: refresh first, or the delete (as of the last refresh) misses them.
      await this.store.refresh(this.index);
      await this.store.deleteWhere("delete source items", this.index, { bool: { filter: [{ term: { record_type: "source_item" } }, { term: { source_id: id } }] } }, { refresh: true });
      await deleteRecord(this.store, this.index, recordId(id));
      await deleteRecord(this.store, this.index, nameRecordId(found.source.knowledge_base_id, found.source.name));
    });
  }

  async items(sourceId: string): Promise<StoredSourceItem[]> {
    return this.records.call("list source items", async () => {
      await this.store.refresh(this.index);
      const items: StoredSourceItem[] = [];
      let after: unknown[] | undefined;
      for (;;) {
        const page = await this.store.search<ItemRecord>(this.index, {
          size: MAX_LISTED,
          query: { bool: { filter: [{ term: { record_type: "source_item" } }, { term: { source_id: sourceId } }] } },
          sort: [{ item_id: "asc" }],
          ...(after ? { search_after: after } : {}),
        });
        for (const hit of page.hits) {
          const s = hit._source!;
          items.push({ itemId: s.item_id, changeToken: s.change_token, contentHash: s.content_hash, documentId: s.document_id, fileName: s.file_name });
        }
        if (page.hits.length < MAX_LISTED) return items;
        after = page.hits.at(-1)!.sort;
      }
    });
  }

  async saveItem(sourceId: string, item: StoredSourceItem): Promise<void> {
    await this.records.call("save source item", async () => {
      const record: ItemRecord = {
        record_type: "source_item",
        source_id: sourceId,
        item_id: item.itemId,
        change_token: item.changeToken,
        content_hash: item.contentHash,
        document_id: item.documentId,
        file_name: item.fileName,
      };
      // Not refreshed item by item: items() refreshes once before it lists.
      await this.store.put(this.index, itemRecordId(sourceId, item.itemId), record, { refresh: false });
    });
  }

  async deleteItem(sourceId: string, itemId: string): Promise<void> {
    await this.records.call("delete source item", async () => {
      await deleteRecord(this.store, this.index, itemRecordId(sourceId, itemId));
    });
  }

  private async reserve(source: StoredSource): Promise<void> {
    const reservation: NameRecord = { record_type: "source_name", id: source.id, knowledge_base_id: source.knowledgeBaseId, name: source.name };
    await this.records.reserve(nameRecordId(source.knowledgeBaseId, source.name), { ...reservation }, `a source named "${source.name}" already exists in this knowledge base`);
  }
}
