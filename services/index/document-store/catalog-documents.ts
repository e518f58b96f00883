// How the catalog is stored as search-engine documents, for the engines that speak the OpenSearch /
// Elasticsearch document API: record ids, source shapes, the index mapping, the per-knowledge-base
// counts aggregation, and the retry loop around optimistic-concurrency conflicts. Backend-free (no
// client import): each backend only makes the calls.
import { createHash } from "node:crypto";
import type { ChunkingSettings, DocumentRecord, DocumentStatus, KnowledgeBase, ModelChange } from "../../../lib/domain.ts";

export interface KnowledgeBaseSource {
  record_type: "knowledge_base";
  id: string;
  name: string;
  description: string;
  embedding_model: string;
  embedding_dimension: number;
  chunking: ChunkingSettings;
  created_at: number;
  updated_at: number;
  /** Stored, not searched; dates as ms since the epoch. */
  model_change?: ModelChangeSource;
}

export type ModelChangeSource = Omit<ModelChange, "startedAt" | "updatedAt"> & { startedAt: number; updatedAt: number };

export function toModelChangeSource(change: ModelChange): ModelChangeSource {
  return { ...change, startedAt: change.startedAt.getTime(), updatedAt: change.updatedAt.getTime() };
}

/** Reserves a knowledge base name: its id derives from the name, so it can be created only once. */
export interface KnowledgeBaseNameSource {
  record_type: "knowledge_base_name";
  id: string;
  name: string;
}

export interface DocumentSource {
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
  /** Absent when the version's indexing touched no hand edits. */
  chunk_edits?: string;
  /** Absent when tracing was off for the version's submission. */
  trace_id?: string;
}

export interface Counts {
  documentCount: number;
  chunkCount: number;
  tokenCount: number;
}

/** A record as read by id, with the version numbers a conditional write (if_seq_no/if_primary_term) needs. */
export interface VersionedSource<T> {
  source: T;
  seqNo: number;
  primaryTerm: number;
}

/** The most records one listing returns (the engines' default max_result_window). */
export const MAX_LISTED = 10_000;

export function knowledgeBaseRecordId(id: string): string {
  return `kb:${id}`;
}

// Hashed: a name can be longer than the engines' 512-byte id limit.
export function nameRecordId(name: string): string {
  return `kb-name:${createHash("sha256").update(name).digest("hex")}`;
}

export function documentRecordId(id: string): string {
  return `doc:${id}`;
}

/** A document written while its base changes its embedding model (catalog/model-change.ts). */
export interface ModelChangeDocumentSource {
  record_type: "model_change_document";
  id: string;
  knowledge_base_id: string;
}

export function modelChangeDocumentRecordId(knowledgeBaseId: string, documentId: string): string {
  return `model-change-doc:${knowledgeBaseId}:${documentId}`;
}

export function modelChangeDocumentsQuery(knowledgeBaseId: string): Record<string, unknown> {
  return { bool: { filter: [{ term: { record_type: "model_change_document" } }, { term: { knowledge_base_id: knowledgeBaseId } }] } };
}

export const CATALOG_MAPPINGS: Record<string, unknown> = {
  dynamic: "strict",
  properties: {
    record_type: { type: "keyword" },
    id: { type: "keyword" },
    name: { type: "keyword" },
    description: { type: "text", index: false },
    embedding_model: { type: "keyword" },
    embedding_dimension: { type: "integer" },
    chunking: { type: "object", enabled: false },
    model_change: { type: "object", enabled: false },
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
    chunk_edits: { type: "text", index: false },
    trace_id: { type: "keyword", index: false },
  },
};

export const CATALOG_MAPPINGS_PROPERTIES = CATALOG_MAPPINGS.properties as Record<string, Record<string, unknown>>;

export const KNOWLEDGE_BASES_QUERY = { term: { record_type: "knowledge_base" } };
export type SortOrder = Record<string, "asc" | "desc">[];
export const KNOWLEDGE_BASES_SORT: SortOrder = [{ created_at: "asc" }, { name: "asc" }];
export const DOCUMENTS_SORT: SortOrder = [{ file_name: "asc" }];

export function documentsOfKnowledgeBaseQuery(knowledgeBaseId: string): Record<string, unknown> {
  return { bool: { filter: [{ term: { record_type: "document" } }, { term: { knowledge_base_id: knowledgeBaseId } }] } };
}

/** A size-0 search body whose aggregation parseCounts reads. */
export function countsSearchBody(knowledgeBaseIds: string[]): Record<string, unknown> {
  return {
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
  };
}

interface CountsAggregations {
  by_knowledge_base: { buckets: { key: string; doc_count: number; ready: { chunks: { value: number }; tokens: { value: number } } }[] };
}

export function parseCounts(aggregations: unknown): Map<string, Counts> {
  const result = new Map<string, Counts>();
  for (const bucket of (aggregations as CountsAggregations).by_knowledge_base.buckets) {
    result.set(bucket.key, { documentCount: bucket.doc_count, chunkCount: bucket.ready.chunks.value, tokenCount: bucket.ready.tokens.value });
  }
  return result;
}

// Enough for any realistic burst of progress messages on one document.
const MAX_CONFLICT_RETRIES = 8;

/** Runs a read-decide-write again while another writer wins the race (isConflict), a few times. */
export async function retryOnConflict<T>(attempt: () => Promise<T>, isConflict: (error: unknown) => boolean): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error) || tries >= MAX_CONFLICT_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * tries));
    }
  }
}

export function toKnowledgeBase(source: KnowledgeBaseSource, counts: Counts = { documentCount: 0, chunkCount: 0, tokenCount: 0 }): KnowledgeBase {
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
    ...(source.model_change
      ? { modelChange: { ...source.model_change, startedAt: new Date(source.model_change.startedAt), updatedAt: new Date(source.model_change.updatedAt) } }
      : {}),
  };
}

export function toDocument(source: DocumentSource): DocumentRecord {
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
    ...(source.chunk_edits ? { chunkEdits: source.chunk_edits } : {}),
    ...(source.trace_id ? { traceId: source.trace_id } : {}),
  };
}

export function toDocumentSource(document: DocumentRecord): DocumentSource {
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
    ...(document.chunkEdits ? { chunk_edits: document.chunkEdits } : {}),
    ...(document.traceId ? { trace_id: document.traceId } : {}),
  };
}
