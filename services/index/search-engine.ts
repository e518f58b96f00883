// Chunk storage and retrieval. Implementations: SQLite FTS5 + sqlite-vec (embedded), OpenSearch and
// Elasticsearch (distributed); all three run testing/search-engine.contract.ts and search through the
// one ladder of search/hybrid-search.ts.
import type { Chunk, EmbeddedChunk, SearchHit, SearchQuery } from "../../lib/domain.ts";

export interface SearchEngine {
  /** Prepares storage for a knowledge base's chunks (vector dimension fixed here). Idempotent. */
  ensureKnowledgeBase(knowledgeBaseId: string, embeddingDimension: number): Promise<void>;
  dropKnowledgeBase(knowledgeBaseId: string): Promise<void>;
  /**
   * Replaces all chunks of a document in one step: readers see either the old set or the new one.
   * Vectors must have the knowledge base's dimension (FailedPreconditionError otherwise, nothing written).
   */
  replaceDocumentChunks(knowledgeBaseId: string, documentId: string, fileName: string, chunks: EmbeddedChunk[]): Promise<void>;
  deleteDocument(knowledgeBaseId: string, documentId: string): Promise<void>;
  /** Disabled documents' chunks stay stored but are never returned by search. */
  setDocumentEnabled(knowledgeBaseId: string, documentId: string, enabled: boolean): Promise<void>;
  /** Throws UnavailableError when the backend cannot answer; never returns an empty list for a failure. */
  search(query: SearchQuery): Promise<SearchHit[]>;
  /** Chunks by id, in the order asked; unknown ids are left out. */
  getChunks(ids: string[]): Promise<Chunk[]>;
  close(): Promise<void>;
}
