// The distributed catalog: knowledge bases and documents as records in one OpenSearch index
// (quarry-catalog), with the shared record shapes of catalog-documents.ts. OpenSearch has no
// transactions, so each document change is a read-decide-write with optimistic concurrency
// (if_seq_no/if_primary_term), retried on conflict; the decisions themselves are the shared rules in
// document-lifecycle.ts. A knowledge base's name is reserved by creating a record whose id derives
// from the name, which OpenSearch can only create once.
import type { Client } from "@opensearch-project/opensearch";
import type { DocumentRecord, IngestionProgress, KnowledgeBase } from "../../../lib/domain.ts";
import { AlreadyExistsError, InvalidInputError, NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import type { Catalog, NewDocumentVersion, NewKnowledgeBase, RegisteredDocument } from "../catalog.ts";
import {
  CATALOG_MAPPINGS,
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
  type Counts,
  type DocumentSource,
  type KnowledgeBaseNameSource,
  type KnowledgeBaseSource,
  type SortOrder,
  type VersionedSource,
} from "../catalog-documents.ts";
import { documentIdFor, newKnowledgeBaseId } from "../catalog-ids.ts";
import { decideRegistration, progressedDocument } from "../document-lifecycle.ts";
import { errorType, isResponseError, toDomainError } from "./opensearch-errors.ts";

export interface OpenSearchCatalogOptions {
  /** The catalog index; tests use their own and delete it afterwards. */
  index?: string;
  replicas?: number;
  /** Close the client on close(); false when the search engine shares it. */
  ownsClient?: boolean;
}

const isConflict = (error: unknown): boolean => isResponseError(error, 409);

export class OpenSearchCatalog implements Catalog {
  private readonly index: string;
  private indexReady: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly options: OpenSearchCatalogOptions = {},
  ) {
    this.index = options.index ?? "quarry-catalog";
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
        await this.client.create({ index: this.index, id: nameRecordId(name), refresh: true, body: reservation as unknown as Record<string, unknown> });
      } catch (error) {
        if (isConflict(error)) throw new AlreadyExistsError(`a knowledge base named "${name}" already exists`, { cause: error });
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
        await this.client.create({ index: this.index, id: knowledgeBaseRecordId(id), refresh: true, body: source as unknown as Record<string, unknown> });
      } catch (error) {
        // Release the name so a retry can take it.
        await this.client.delete({ index: this.index, id: nameRecordId(name), refresh: true }).catch(() => undefined);
        throw error;
      }
      return toKnowledgeBase(source);
    });
  }

  async getKnowledgeBase(idOrName: string): Promise<KnowledgeBase> {
    return this.call("get knowledge base", async () => {
      // An id wins over a name that happens to equal another knowledge base's id.
      let found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(idOrName));
      if (!found) {
        const reserved = await this.getSource<KnowledgeBaseNameSource>(nameRecordId(idOrName));
        if (reserved) found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(reserved.source.id));
      }
      if (!found) throw new NotFoundError(`knowledge base ${idOrName} not found`);
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

  async deleteKnowledgeBase(id: string): Promise<void> {
    await this.call("delete knowledge base", async () => {
      const found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(id));
      if (!found) throw new NotFoundError(`knowledge base ${id} not found`);
      await this.client.deleteByQuery({
        index: this.index,
        conflicts: "proceed",
        refresh: true,
        body: { query: documentsOfKnowledgeBaseQuery(id) },
      });
      await this.client.delete({ index: this.index, id: knowledgeBaseRecordId(id), refresh: true });
      await this.client.delete({ index: this.index, id: nameRecordId(found.source.name), refresh: true }).catch((error: unknown) => {
        if (!isResponseError(error, 404)) throw error;
      });
    });
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
      }, isConflict);
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
        if (next && next !== current) await this.saveDocument(next, existing);
        return next;
      }, isConflict),
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
      }, isConflict),
    );
  }

  async deleteDocument(id: string): Promise<void> {
    await this.call("delete document", async () => {
      try {
        await this.client.delete({ index: this.index, id: documentRecordId(id), refresh: true });
      } catch (error) {
        if (isResponseError(error, 404)) throw new NotFoundError(`document ${id} not found`, { cause: error });
        throw error;
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.options.ownsClient) await this.client.close();
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new UnavailableError(`${what}: the catalog is closed`);
    try {
      await this.ensureIndex();
      return await fn();
    } catch (error) {
      throw toDomainError(error, what);
    }
  }

  private ensureIndex(): Promise<void> {
    this.indexReady ??= this.client.indices
      .create({
        index: this.index,
        body: {
          settings: { number_of_shards: 1, number_of_replicas: this.options.replicas ?? 0 },
          mappings: CATALOG_MAPPINGS,
        } as Record<string, unknown>,
      })
      .then(
        () => undefined,
        (error: unknown) => {
          if (errorType(error) === "resource_already_exists_exception") return;
          this.indexReady = undefined;
          throw error;
        },
      );
    return this.indexReady;
  }

  /** A real-time read by id (no refresh needed), with the version numbers a conditional write needs. */
  private async getSource<T>(id: string): Promise<VersionedSource<T> | undefined> {
    try {
      const { body } = await this.client.get({ index: this.index, id });
      const result = body as { found: boolean; _source?: T; _seq_no?: number; _primary_term?: number };
      if (!result.found || !result._source) return undefined;
      return { source: result._source, seqNo: result._seq_no!, primaryTerm: result._primary_term! };
    } catch (error) {
      if (isResponseError(error, 404) && errorType(error) !== "index_not_found_exception") return undefined;
      throw error;
    }
  }

  private async searchSources<T>(query: Record<string, unknown>, sort: SortOrder): Promise<T[]> {
    const { body } = await this.client.search({ index: this.index, body: { size: MAX_LISTED, query, sort } as never });
    return (body as unknown as { hits: { hits: { _source: T }[] } }).hits.hits.map((hit) => hit._source);
  }

  private async counts(knowledgeBaseIds: string[]): Promise<Map<string, Counts>> {
    if (knowledgeBaseIds.length === 0) return new Map();
    const { body } = await this.client.search({ index: this.index, body: countsSearchBody(knowledgeBaseIds) as never });
    return parseCounts((body as unknown as { aggregations: unknown }).aggregations);
  }

  /** Writes the record only if nobody changed it since it was read (creates it only if still absent). */
  private async saveDocument(document: DocumentRecord, read: VersionedSource<DocumentSource> | undefined): Promise<void> {
    const body = toDocumentSource(document) as unknown as Record<string, unknown>;
    const id = documentRecordId(document.id);
    if (read) {
      await this.client.index({ index: this.index, id, body, refresh: true, if_seq_no: read.seqNo, if_primary_term: read.primaryTerm });
    } else {
      await this.client.create({ index: this.index, id, body, refresh: true });
    }
  }
}
