// The catalog on a search engine (OpenSearch or Elasticsearch, through document-store-port.ts):
// knowledge bases and documents as records in one index (quarry-catalog), with the shared record
// shapes of catalog-documents.ts. These engines have no transactions, so each document change is a
// read-decide-write with optimistic concurrency (if_seq_no/if_primary_term), retried on conflict;
// the decisions themselves are the shared rules in document-lifecycle.ts. A knowledge base's name is
// reserved by creating a record whose id derives from the name, which the engine can only create once.
import type { DocumentRecord, IngestionProgress, KnowledgeBase, ModelChange } from "../../../lib/domain.ts";
import { AlreadyExistsError, InvalidInputError, NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import type { Catalog, KnowledgeBaseUpdate, NewDocumentVersion, NewKnowledgeBase, RegisteredDocument } from "../catalog/catalog.ts";
import {
  CATALOG_MAPPINGS,
  CATALOG_MAPPINGS_PROPERTIES,
  countsSearchBody,
  documentRecordId,
  DOCUMENTS_SORT,
  documentsOfKnowledgeBaseQuery,
  knowledgeBaseRecordId,
  KNOWLEDGE_BASES_QUERY,
  KNOWLEDGE_BASES_SORT,
  MAX_LISTED,
  nameRecordId,
  parseCounts,
  retryOnConflict,
  toDocument,
  toDocumentSource,
  toKnowledgeBase,
  toModelChangeSource,
  modelChangeDocumentRecordId,
  modelChangeDocumentsQuery,
  type ModelChangeDocumentSource,
  type Counts,
  type DocumentSource,
  type KnowledgeBaseNameSource,
  type KnowledgeBaseSource,
  type SortOrder,
  type VersionedSource,
} from "./catalog-documents.ts";
import { documentIdFor, newKnowledgeBaseId } from "../../../lib/catalog-ids.ts";
import { decideRegistration, isTerminal, progressedDocument } from "../catalog/document-lifecycle.ts";
import { deleteRecord, findRecord, indexCreator, type DocumentStorePort } from "./document-store-port.ts";
import { WriteBatches } from "./write-batches.ts";
import { replicationSettings } from "../../../lib/index-replication.ts";

export interface DocumentStoreCatalogOptions {
  /** The catalog index; tests use their own and delete it afterwards. */
  index?: string;
  /** Unset: one replica where the cluster has a second data node (index-replication.ts). */
  replicas?: number;
  /** Close the client on close(); false when the search engine shares it. */
  ownsClient?: boolean;
  /** Records per page when listing (default 10,000, the engines' max_result_window); tests page small. */
  listPageSize?: number;
}

/** Document fields a catalog index made before them lacks in its strict mapping. */
const LATER_DOCUMENT_FIELDS = ["chunk_edits", "trace_id"] as const;

export class DocumentStoreCatalog implements Catalog {
  private readonly index: string;
  private readonly ensureIndex: () => Promise<void>;
  private closed = false;
  private modelChangeMapping: Promise<void> | undefined;
  /** Per field added to the mapping after catalogs existed: its putMapping, made once. */
  private readonly laterFieldMappings = new Map<(typeof LATER_DOCUMENT_FIELDS)[number], Promise<void>>();
  private readonly isConflict = (error: unknown): boolean => this.store.errors.isResponseError(error, 409);
  /**
   * Refreshes of the catalog index, one at a time, each shared by every document write that asked
   * for one while the one before ran: at ingest rates a refresh per write kept the index's write
   * threads busy refreshing, and every catalog write waited on them.
   */
  private readonly refreshes = new WriteBatches<undefined>(
    async (index, waiting) => {
      await this.store.refresh(index);
      return waiting.map(() => undefined);
    },
    { maxWrites: Number.MAX_SAFE_INTEGER, maxWeight: Number.MAX_SAFE_INTEGER },
  );
  private refreshRequests = 0;

  constructor(
    private readonly store: DocumentStorePort,
    private readonly options: DocumentStoreCatalogOptions = {},
  ) {
    this.index = options.index ?? "quarry-catalog";
    this.ensureIndex = indexCreator(store, this.index, () => ({
      settings: replicationSettings(options.replicas),
      mappings: CATALOG_MAPPINGS,
    }));
  }

  async createKnowledgeBase(input: NewKnowledgeBase): Promise<KnowledgeBase> {
    const name = input.name.trim();
    if (!name) throw new InvalidInputError("a knowledge base needs a name");
    if (!Number.isInteger(input.embeddingDimension) || input.embeddingDimension <= 0) {
      throw new InvalidInputError(`embedding dimension must be a positive integer, got ${input.embeddingDimension}`);
    }
    return this.call("create knowledge base", async () => {
      const id = newKnowledgeBaseId();
      const reservation: KnowledgeBaseNameSource = { record_type: "knowledge_base_name", id, name };
      try {
        await this.store.create(this.index, nameRecordId(name), reservation);
      } catch (error) {
        if (this.isConflict(error)) throw new AlreadyExistsError(`a knowledge base named "${name}" already exists`, { cause: error });
        throw error;
      }
      const now = Date.now();
      const source: KnowledgeBaseSource = {
        record_type: "knowledge_base",
        id,
        name,
        description: input.description,
        embedding_model: input.embeddingModel,
        embedding_dimension: input.embeddingDimension,
        chunking: input.chunking,
        created_at: now,
        updated_at: now,
      };
      try {
        await this.store.create(this.index, knowledgeBaseRecordId(id), source);
      } catch (error) {
        // Release the name so a retry can take it.
        await this.store.delete(this.index, nameRecordId(name)).catch(() => undefined);
        throw error;
      }
      return toKnowledgeBase(source);
    });
  }

  async getKnowledgeBase(idOrName: string, options: { counts?: boolean } = {}): Promise<KnowledgeBase> {
    return this.call("get knowledge base", async () => {
      // An id wins over a name that happens to equal another knowledge base's id.
      let found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(idOrName));
      if (!found) {
        const reserved = await this.getSource<KnowledgeBaseNameSource>(nameRecordId(idOrName));
        if (reserved) found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(reserved.source.id));
      }
      if (!found) throw new NotFoundError(`knowledge base ${idOrName} not found`);
      if (options.counts === false) return toKnowledgeBase(found.source);
      const counts = await this.counts([found.source.id]);
      return toKnowledgeBase(found.source, counts.get(found.source.id));
    });
  }

  async listKnowledgeBases(): Promise<KnowledgeBase[]> {
    return this.call("list knowledge bases", async () => {
      const sources = await this.searchSources<KnowledgeBaseSource>(KNOWLEDGE_BASES_QUERY, KNOWLEDGE_BASES_SORT);
      const counts = await this.counts(sources.map((source) => source.id));
      return sources.map((source) => toKnowledgeBase(source, counts.get(source.id)));
    });
  }

  /**
   * A new name is reserved first (its record can only be created once, as in create), the base's
   * record is rewritten if unchanged since read, and only then the old name is released; a failed
   * write releases the new name again.
   */
  async updateKnowledgeBase(id: string, update: KnowledgeBaseUpdate): Promise<KnowledgeBase> {
    return this.call("update knowledge base", async () => {
      const before = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(id));
      if (!before) throw new NotFoundError(`knowledge base ${id} not found`);
      const renamed = update.name !== undefined && update.name !== before.source.name ? update.name : undefined;
      if (renamed !== undefined) {
        const reservation: KnowledgeBaseNameSource = { record_type: "knowledge_base_name", id, name: renamed };
        try {
          await this.store.create(this.index, nameRecordId(renamed), reservation);
        } catch (error) {
          if (this.isConflict(error)) throw new AlreadyExistsError(`a knowledge base named "${renamed}" already exists`, { cause: error });
          throw error;
        }
      }
      let oldName = before.source.name;
      let saved: KnowledgeBaseSource;
      try {
        saved = await retryOnConflict(async () => {
          const found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(id));
          if (!found) throw new NotFoundError(`knowledge base ${id} not found`);
          oldName = found.source.name;
          const source: KnowledgeBaseSource = {
            ...found.source,
            ...(renamed !== undefined ? { name: renamed } : {}),
            ...(update.description !== undefined ? { description: update.description } : {}),
            ...(update.chunking ? { chunking: update.chunking } : {}),
            updated_at: Date.now(),
          };
          await this.store.put(this.index, knowledgeBaseRecordId(id), source, { refresh: true, ifUnchanged: found });
          return source;
        }, this.isConflict);
      } catch (error) {
        if (renamed !== undefined) await this.store.delete(this.index, nameRecordId(renamed)).catch(() => undefined);
        throw error;
      }
      if (renamed !== undefined && oldName !== renamed) await deleteRecord(this.store, this.index, nameRecordId(oldName));
      const counts = await this.counts([id]);
      return toKnowledgeBase(saved, counts.get(id));
    });
  }

  async deleteKnowledgeBase(id: string): Promise<void> {
    await this.call("delete knowledge base", async () => {
      const found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(id));
      if (!found) throw new NotFoundError(`knowledge base ${id} not found`);
      // Catalog writes refresh, so the query sees every document record.
      await this.store.deleteWhere("delete knowledge base", this.index, { bool: { should: [documentsOfKnowledgeBaseQuery(id), modelChangeDocumentsQuery(id)] } }, {
        refresh: true,
        requireAlias: false,
        alsoIds: [knowledgeBaseRecordId(id), nameRecordId(found.source.name)],
      });
    });
  }

  async saveModelChange(knowledgeBaseId: string, change: ModelChange, options: { switchModel?: boolean } = {}): Promise<KnowledgeBase> {
    return this.call("save model change", async () => {
      // A catalog index made before model changes existed has a strict mapping without the field.
      this.modelChangeMapping ??= this.store.putMapping(this.index, { model_change: CATALOG_MAPPINGS_PROPERTIES.model_change }).catch((error: unknown) => {
        this.modelChangeMapping = undefined;
        throw error;
      });
      await this.modelChangeMapping;
      const saved = await retryOnConflict(async () => {
        const found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(knowledgeBaseId));
        if (!found) throw new NotFoundError(`knowledge base ${knowledgeBaseId} not found`);
        const source: KnowledgeBaseSource = {
          ...found.source,
          model_change: toModelChangeSource(change),
          ...(options.switchModel ? { embedding_model: change.targetModel, embedding_dimension: change.targetDimension, updated_at: Date.now() } : {}),
        };
        await this.store.put(this.index, knowledgeBaseRecordId(knowledgeBaseId), source, { refresh: true, ifUnchanged: found });
        return source;
      }, this.isConflict);
      const counts = await this.counts([knowledgeBaseId]);
      return toKnowledgeBase(saved, counts.get(knowledgeBaseId));
    });
  }

  async markModelChangeDocuments(knowledgeBaseId: string, documentIds: string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.call("mark model change documents", async () => {
      const operations = documentIds.flatMap((id): Record<string, unknown>[] => {
        const source: ModelChangeDocumentSource = { record_type: "model_change_document", id, knowledge_base_id: knowledgeBaseId };
        return [{ index: { _index: this.index, _id: modelChangeDocumentRecordId(knowledgeBaseId, id) } }, { ...source }];
      });
      // Refreshed at once: the change lists the marks by a search right before it switches.
      await this.store.bulk("mark model change documents", operations, { refresh: true });
    });
  }

  async modelChangeDocuments(knowledgeBaseId: string): Promise<string[]> {
    return this.call("list model change documents", async () => {
      const sources = await this.searchSources<ModelChangeDocumentSource>(modelChangeDocumentsQuery(knowledgeBaseId), []);
      return sources.map((source) => source.id).sort();
    });
  }

  async clearModelChangeDocuments(knowledgeBaseId: string): Promise<void> {
    await this.call("clear model change documents", () => this.store.deleteWhere("clear model change documents", this.index, modelChangeDocumentsQuery(knowledgeBaseId), { refresh: true }));
  }

  async registerDocument(input: NewDocumentVersion): Promise<RegisteredDocument> {
    if (!input.fileName) throw new InvalidInputError("a document needs a file name");
    return this.call("register document", async () => {
      if (!(await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(input.knowledgeBaseId)))) {
        throw new NotFoundError(`knowledge base ${input.knowledgeBaseId} not found`);
      }
      const id = documentIdFor(input.knowledgeBaseId, input.fileName);
      return retryOnConflict(async () => {
        const existing = await this.getSource<DocumentSource>(documentRecordId(id));
        const decision = decideRegistration(id, existing && toDocument(existing.source), input, new Date());
        if (decision.write) await this.saveDocument(decision.result.document, existing);
        return decision.result;
      }, this.isConflict);
    });
  }

  async importDocuments(knowledgeBaseId: string, documents: DocumentRecord[]): Promise<void> {
    await this.call("import documents", async () => {
      if (!(await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(knowledgeBaseId)))) {
        throw new NotFoundError(`knowledge base ${knowledgeBaseId} not found`);
      }
      if (documents.length === 0) return;
      const operations = documents.flatMap((document): Record<string, unknown>[] => [{ create: { _index: this.index, _id: documentRecordId(document.id) } }, { ...toDocumentSource(document) }]);
      const items = await this.store.bulkItems(operations, { refresh: false });
      const failed = items.findIndex((item) => item.error !== undefined);
      if (failed >= 0) {
        if (items[failed].status === 409) throw new AlreadyExistsError(`document ${documents[failed].fileName} is already in knowledge base ${knowledgeBaseId}`);
        throw this.store.errors.itemError("import documents", items[failed].status, items[failed].error);
      }
      await this.refreshes.write(this.index, undefined, { id: String(this.refreshRequests++), weight: 0 });
    });
  }

  async getDocument(id: string): Promise<DocumentRecord> {
    return this.call("get document", async () => {
      const found = await this.getSource<DocumentSource>(documentRecordId(id));
      if (!found) throw new NotFoundError(`document ${id} not found`);
      return toDocument(found.source);
    });
  }

  async listDocuments(knowledgeBaseId: string): Promise<DocumentRecord[]> {
    return this.call("list documents", async () => {
      if (!(await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(knowledgeBaseId)))) {
        throw new NotFoundError(`knowledge base ${knowledgeBaseId} not found`);
      }
      const sources = await this.searchSources<DocumentSource>(documentsOfKnowledgeBaseQuery(knowledgeBaseId), DOCUMENTS_SORT);
      return sources.map(toDocument);
    });
  }

  async applyProgress(progress: IngestionProgress): Promise<DocumentRecord | null> {
    return this.call("apply progress", () =>
      retryOnConflict(async () => {
        const existing = await this.getSource<DocumentSource>(documentRecordId(progress.documentId));
        if (!existing || existing.source.knowledge_base_id !== progress.knowledgeBaseId) return null;
        const current = toDocument(existing.source);
        const next = progressedDocument(current, progress, new Date());
        // Only a finished status must be listed at once; the phases between reach watchers as
        // events, and listings catch up at the catalog index's next scheduled refresh (≤ 1 s).
        if (next && next !== current) await this.saveDocument(next, existing, { refresh: isTerminal(next.status) });
        return next;
      }, this.isConflict),
    );
  }

  async setDocumentEnabled(id: string, enabled: boolean): Promise<DocumentRecord> {
    return this.call("set document enabled", () =>
      retryOnConflict(async () => {
        const existing = await this.getSource<DocumentSource>(documentRecordId(id));
        if (!existing) throw new NotFoundError(`document ${id} not found`);
        const next = { ...toDocument(existing.source), enabled, updatedAt: new Date() };
        await this.saveDocument(next, existing);
        return next;
      }, this.isConflict),
    );
  }

  async setDocumentMetadata(id: string, metadata: Record<string, string>): Promise<DocumentRecord> {
    return this.call("set document metadata", () =>
      retryOnConflict(async () => {
        const existing = await this.getSource<DocumentSource>(documentRecordId(id));
        if (!existing) throw new NotFoundError(`document ${id} not found`);
        const next = { ...toDocument(existing.source), metadata, updatedAt: new Date() };
        await this.saveDocument(next, existing);
        return next;
      }, this.isConflict),
    );
  }

  async deleteDocument(id: string): Promise<void> {
    await this.call("delete document", async () => {
      if (!(await deleteRecord(this.store, this.index, documentRecordId(id)))) throw new NotFoundError(`document ${id} not found`);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.options.ownsClient) await this.store.close();
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new UnavailableError(`${what}: the catalog is closed`);
    try {
      await this.ensureIndex();
      return await fn();
    } catch (error) {
      throw this.store.errors.toDomainError(error, what);
    }
  }

  /** A real-time read by id (no refresh needed), with the version numbers a conditional write needs. */
  private getSource<T>(id: string): Promise<VersionedSource<T> | undefined> {
    return findRecord<T>(this.store, this.index, id);
  }

  /**
   * Every record matching the query, page by page with search_after: one search returns at most
   * max_result_window (10,000) hits, and a knowledge base holds more documents than that (cMedIR's
   * 19,237 titles: WatchIngestion saw 10,000 of them and called the ingest done). The record id
   * breaks ties so pages neither repeat nor skip records.
   */
  private async searchSources<T>(query: Record<string, unknown>, sort: SortOrder): Promise<T[]> {
    const size = Math.max(1, this.options.listPageSize ?? MAX_LISTED);
    const order = [...sort, { id: "asc" as const }];
    const sources: T[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const result = await this.store.search<T>(this.index, { size, query, sort: order, ...(after ? { search_after: after } : {}) });
      sources.push(...result.hits.map((hit) => hit._source!));
      if (result.hits.length < size) return sources;
      after = result.hits[result.hits.length - 1].sort;
      if (!after) throw new Error("the engine returned no sort values to page on");
    }
  }

  private async counts(knowledgeBaseIds: string[]): Promise<Map<string, Counts>> {
    if (knowledgeBaseIds.length === 0) return new Map();
    const result = await this.store.search(this.index, countsSearchBody(knowledgeBaseIds));
    return parseCounts(result.aggregations);
  }

  /**
   * Writes the record only if nobody changed it since it was read (creates it only if still absent),
   * visible to searches (listings, counts) on return unless told otherwise; reads by id see it anyway.
   * The refresh is shared: documents saved while one runs wait for the next one together.
   */
  private async saveDocument(document: DocumentRecord, read: VersionedSource<DocumentSource> | undefined, options: { refresh: boolean } = { refresh: true }): Promise<void> {
    const source = toDocumentSource(document);
    // A catalog made before chunk edits (or trace ids) gets the field the first time a document needs it.
    for (const field of LATER_DOCUMENT_FIELDS) {
      if (source[field] === undefined) continue;
      let added = this.laterFieldMappings.get(field);
      if (!added) {
        added = this.store.putMapping(this.index, { [field]: CATALOG_MAPPINGS_PROPERTIES[field] }).catch((error: unknown) => {
          this.laterFieldMappings.delete(field);
          throw error;
        });
        this.laterFieldMappings.set(field, added);
      }
      await added;
    }
    const id = documentRecordId(document.id);
    if (read) await this.store.put(this.index, id, source, { refresh: false, ifUnchanged: read });
    else await this.store.create(this.index, id, source, { refresh: false });
    if (options.refresh) await this.refreshes.write(this.index, undefined, { id: String(this.refreshRequests++), weight: 0 });
  }
}
