// The distributed catalog: knowledge bases and documents as records in one OpenSearch index
// (quarry-catalog). OpenSearch has no transactions, so each document change is a read-decide-write
// with optimistic concurrency (if_seq_no/if_primary_term), retried on conflict; the decisions
// themselves are the shared rules in document-lifecycle.ts. A knowledge base's name is reserved by
// creating a record whose id derives from the name, which OpenSearch can only create once.
import { createHash } from "node:crypto";
import type { Client } from "@opensearch-project/opensearch";
import type { ChunkingSettings, DocumentRecord, DocumentStatus, IngestionProgress, KnowledgeBase } from "../../../lib/domain.ts";
import { AlreadyExistsError, InvalidInputError, NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import type { Catalog, NewDocumentVersion, NewKnowledgeBase, RegisteredDocument } from "../catalog.ts";
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

interface KnowledgeBaseSource {
  record_type: "knowledge_base";
  id: string;
  name: string;
  description: string;
  embedding_model: string;
  embedding_dimension: number;
  chunking: ChunkingSettings;
  created_at: number;
  updated_at: number;
}

interface DocumentSource {
  record_type: "document";
  id: string;
  knowledge_base_id: string;
  file_name: string;
  mime_type: string;
  size_bytes: number;
  content_hash: string;
  version: number;
  status: DocumentStatus;
  progress_percent: number;
  chunk_count: number;
  token_count: number;
  error_message: string;
  enabled: boolean;
  metadata: Record<string, string>;
  created_at: number;
  updated_at: number;
}

interface Versioned<T> {
  source: T;
  seqNo: number;
  primaryTerm: number;
}

interface Counts {
  documentCount: number;
  chunkCount: number;
  tokenCount: number;
}

// Enough for any realistic burst of progress messages on one document.
const MAX_CONFLICT_RETRIES = 8;
const MAX_LISTED = 10_000;

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
      try {
        await this.client.create({ index: this.index, id: nameRecordId(name), refresh: true, body: { record_type: "knowledge_base_name", id, name } });
      } catch (error) {
        if (isResponseError(error, 409)) throw new AlreadyExistsError(`a knowledge base named "${name}" already exists`, { cause: error });
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
      return toKnowledgeBase(source, { documentCount: 0, chunkCount: 0, tokenCount: 0 });
    });
  }

  async getKnowledgeBase(idOrName: string): Promise<KnowledgeBase> {
    return this.call("get knowledge base", async () => {
      // An id wins over a name that happens to equal another knowledge base's id.
      let found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(idOrName));
      if (!found) {
        const reserved = await this.getSource<{ id: string }>(nameRecordId(idOrName));
        if (reserved) found = await this.getSource<KnowledgeBaseSource>(knowledgeBaseRecordId(reserved.source.id));
      }
      if (!found) throw new NotFoundError(`knowledge base ${idOrName} not found`);
      const counts = await this.counts([found.source.id]);
      return toKnowledgeBase(found.source, counts.get(found.source.id));
    });
  }

  async listKnowledgeBases(): Promise<KnowledgeBase[]> {
    return this.call("list knowledge bases", async () => {
      const sources = await this.searchSources<KnowledgeBaseSource>({ term: { record_type: "knowledge_base" } }, [{ created_at: "asc" }, { name: "asc" }]);
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
        body: { query: { bool: { filter: [{ term: { record_type: "document" } }, { term: { knowledge_base_id: id } }] } } },
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
      return this.withConflictRetry(async () => {
        const existing = await this.getSource<DocumentSource>(documentRecordId(id));
        const decision = decideRegistration(id, existing && toDocument(existing.source), input, new Date());
        if (decision.write) await this.saveDocument(decision.result.document, existing);
        return decision.result;
      });
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
      const sources = await this.searchSources<DocumentSource>(
        { bool: { filter: [{ term: { record_type: "document" } }, { term: { knowledge_base_id: knowledgeBaseId } }] } },
        [{ file_name: "asc" }],
      );
      return sources.map(toDocument);
    });
  }

  async applyProgress(progress: IngestionProgress): Promise<DocumentRecord | null> {
    return this.call("apply progress", () =>
      this.withConflictRetry(async () => {
        const existing = await this.getSource<DocumentSource>(documentRecordId(progress.documentId));
        if (!existing || existing.source.knowledge_base_id !== progress.knowledgeBaseId) return null;
        const current = toDocument(existing.source);
        const next = progressedDocument(current, progress, new Date());
        if (next && next !== current) await this.saveDocument(next, existing);
        return next;
      }),
    );
  }

  async setDocumentEnabled(id: string, enabled: boolean): Promise<DocumentRecord> {
    return this.call("set document enabled", () =>
      this.withConflictRetry(async () => {
        const existing = await this.getSource<DocumentSource>(documentRecordId(id));
        if (!existing) throw new NotFoundError(`document ${id} not found`);
        const next = { ...toDocument(existing.source), enabled, updatedAt: new Date() };
        await this.saveDocument(next, existing);
        return next;
      }),
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
          mappings: {
            dynamic: "strict",
            properties: {
              record_type: { type: "keyword" },
              id: { type: "keyword" },
              name: { type: "keyword" },
              description: { type: "text", index: false },
              embedding_model: { type: "keyword" },
              embedding_dimension: { type: "integer" },
              chunking: { type: "object", enabled: false },
              knowledge_base_id: { type: "keyword" },
              file_name: { type: "keyword" },
              mime_type: { type: "keyword" },
              size_bytes: { type: "long" },
              content_hash: { type: "keyword" },
              version: { type: "long" },
              status: { type: "keyword" },
              progress_percent: { type: "float" },
              chunk_count: { type: "long" },
              token_count: { type: "long" },
              error_message: { type: "text", index: false },
              enabled: { type: "boolean" },
              metadata: { type: "object", enabled: false },
              created_at: { type: "long" },
              updated_at: { type: "long" },
            },
          },
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
  private async getSource<T>(id: string): Promise<Versioned<T> | undefined> {
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

  private async searchSources<T>(query: Record<string, unknown>, sort: Record<string, string>[]): Promise<T[]> {
    const { body } = await this.client.search({ index: this.index, body: { size: MAX_LISTED, query, sort } as never });
    return (body as unknown as { hits: { hits: { _source: T }[] } }).hits.hits.map((hit) => hit._source);
  }

  private async counts(knowledgeBaseIds: string[]): Promise<Map<string, Counts>> {
    const result = new Map<string, Counts>();
    if (knowledgeBaseIds.length === 0) return result;
    const { body } = await this.client.search({
      index: this.index,
      body: {
        size: 0,
        query: { bool: { filter: [{ term: { record_type: "document" } }, { terms: { knowledge_base_id: knowledgeBaseIds } }] } },
        aggs: {
          by_knowledge_base: {
            terms: { field: "knowledge_base_id", size: knowledgeBaseIds.length },
            aggs: {
              // Chunks and tokens of ready documents only: a document in flight has no settled count.
              ready: { filter: { term: { status: "ready" } }, aggs: { chunks: { sum: { field: "chunk_count" } }, tokens: { sum: { field: "token_count" } } } },
            },
          },
        },
      } as never,
    });
    const buckets = (
      body as unknown as {
        aggregations: { by_knowledge_base: { buckets: { key: string; doc_count: number; ready: { chunks: { value: number }; tokens: { value: number } } }[] } };
      }
    ).aggregations.by_knowledge_base.buckets;
    for (const bucket of buckets) {
      result.set(bucket.key, { documentCount: bucket.doc_count, chunkCount: bucket.ready.chunks.value, tokenCount: bucket.ready.tokens.value });
    }
    return result;
  }

  /** Writes the record only if nobody changed it since it was read (creates it only if still absent). */
  private async saveDocument(document: DocumentRecord, read: Versioned<DocumentSource> | undefined): Promise<void> {
    const body = toDocumentSource(document) as unknown as Record<string, unknown>;
    const id = documentRecordId(document.id);
    if (read) {
      await this.client.index({ index: this.index, id, body, refresh: true, if_seq_no: read.seqNo, if_primary_term: read.primaryTerm });
    } else {
      await this.client.create({ index: this.index, id, body, refresh: true });
    }
  }

  private async withConflictRetry<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        if (!isResponseError(error, 409) || tries >= MAX_CONFLICT_RETRIES) throw error;
        // Another writer won the race: read again and re-decide.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * tries));
      }
    }
  }
}

function knowledgeBaseRecordId(id: string): string {
  return `kb:${id}`;
}

// Hashed: a name can be longer than OpenSearch's 512-byte id limit.
function nameRecordId(name: string): string {
  return `kb-name:${createHash("sha256").update(name).digest("hex")}`;
}

function documentRecordId(id: string): string {
  return `doc:${id}`;
}

function toKnowledgeBase(source: KnowledgeBaseSource, counts: Counts = { documentCount: 0, chunkCount: 0, tokenCount: 0 }): KnowledgeBase {
  return {
    id: source.id,
    name: source.name,
    description: source.description,
    embeddingModel: source.embedding_model,
    embeddingDimension: source.embedding_dimension,
    chunking: source.chunking,
    documentCount: counts.documentCount,
    chunkCount: counts.chunkCount,
    tokenCount: counts.tokenCount,
    createdAt: new Date(source.created_at),
    updatedAt: new Date(source.updated_at),
  };
}

function toDocument(source: DocumentSource): DocumentRecord {
  return {
    id: source.id,
    knowledgeBaseId: source.knowledge_base_id,
    fileName: source.file_name,
    mimeType: source.mime_type,
    sizeBytes: source.size_bytes,
    contentHash: source.content_hash,
    version: source.version,
    status: source.status,
    progressPercent: source.progress_percent,
    chunkCount: source.chunk_count,
    tokenCount: source.token_count,
    errorMessage: source.error_message,
    enabled: source.enabled,
    metadata: source.metadata ?? {},
    createdAt: new Date(source.created_at),
    updatedAt: new Date(source.updated_at),
  };
}

function toDocumentSource(document: DocumentRecord): DocumentSource {
  return {
    record_type: "document",
    id: document.id,
    knowledge_base_id: document.knowledgeBaseId,
    file_name: document.fileName,
    mime_type: document.mimeType,
    size_bytes: document.sizeBytes,
    content_hash: document.contentHash,
    version: document.version,
    status: document.status,
    progress_percent: document.progressPercent,
    chunk_count: document.chunkCount,
    token_count: document.tokenCount,
    error_message: document.errorMessage,
    enabled: document.enabled,
    metadata: document.metadata,
    created_at: document.createdAt.getTime(),
    updated_at: document.updatedAt.getTime(),
  };
}
