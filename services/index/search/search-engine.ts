// Chunk storage and retrieval. Implementations: SQLite FTS5 + sqlite-vec (embedded), OpenSearch and
// Elasticsearch (distributed); all three run testing/search-engine.contract.ts and search through the
// one ladder of search/hybrid-search.ts.
import type { Chunk, EmbeddedChunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError } from "../../../lib/errors.ts";
import type { ChunkFind, ChunkFindRequest } from "./chunk-text-find.ts";

export interface ChunkPosition {
  knowledgeBaseId: string;
  documentId: string;
  index: number;
}

export interface StoredDocumentChunks {
  chunks: EmbeddedChunk[];
  documentVector?: Float32Array;
}

/** One document's chunks as an import brings them (portability/): new to its base, flag and all. */
export interface ImportedDocumentChunks {
  documentId: string;
  fileName: string;
  enabled: boolean;
  chunks: EmbeddedChunk[];
  documentVector?: Float32Array;
}

/** What a base's chunk store holds, by document, for quarry doctor. */
export interface ChunkCensus {
  /** Document id → its chunks stored. */
  chunks: Map<string, number>;
  /** Chunks stored without a vector. */
  withoutVector: number;
}

/** What a search call may carry beside its query. */
export interface SearchCallOptions {
  /**
   * Fires when the caller goes away (a cancelled request, a passed deadline): a search not started
   * yet is dropped with CancelledError instead of being run for nobody. A started one may finish.
   */
  signal?: AbortSignal;
}

export interface SearchEngine {
  /**
   * The distributed doctor's look at a base's chunks (app/distributed-doctor.ts); the embedded
   * doctor reads the SQLite file itself. A base with no chunk store yet holds nothing.
   */
  chunkCensus?(knowledgeBaseId: string): Promise<ChunkCensus>;
  /** Prepares storage for a knowledge base's chunks (vector dimension fixed here). Idempotent. */
  ensureKnowledgeBase(knowledgeBaseId: string, embeddingDimension: number): Promise<void>;
  dropKnowledgeBase(knowledgeBaseId: string): Promise<void>;
  /**
   * Replaces all chunks of a document in one step: readers see either the old set or the new one.
   * Vectors must have the knowledge base's dimension (FailedPreconditionError otherwise, nothing written).
   * A document vector (the whole document embedded as one input) is stored with the document's
   * first chunk and replaced, disabled and deleted with it; without one the document has none.
   */
  replaceDocumentChunks(knowledgeBaseId: string, documentId: string, fileName: string, chunks: EmbeddedChunk[], documentVector?: Float32Array): Promise<void>;
  /**
   * Stores many documents of a base an import is filling, in one write (a transaction, one _bulk):
   * none of them may have chunks stored yet, so nothing is looked up or deleted. Readers may see
   * them only after finishImport. Dimensions are checked as replaceDocumentChunks does.
   */
  importDocuments(knowledgeBaseId: string, documents: ImportedDocumentChunks[]): Promise<void>;
  /** Makes every imported document visible to search at once (a refresh where the engine needs one). */
  finishImport(knowledgeBaseId: string): Promise<void>;
  deleteDocument(knowledgeBaseId: string, documentId: string): Promise<void>;
  /** Disabled documents' chunks stay stored but are never returned by search. */
  setDocumentEnabled(knowledgeBaseId: string, documentId: string, enabled: boolean): Promise<void>;
  /**
   * Stores one chunk of a document: an edit replaces the stored chunk with its id in place (a
   * document vector stored with it stays), a new id is added. Searchable when this returns; its
   * flag is the document's unless chunk.disabled. A running change of model loses the chunk's
   * shadow vector and embeds it again.
   */
  putChunk(knowledgeBaseId: string, documentId: string, fileName: string, chunk: EmbeddedChunk): Promise<void>;
  /**
   * A chunk's own flag: a disabled chunk stays stored (and listed) but search never returns it,
   * whatever its document's flag; on a document's first chunk it takes the document vector out of
   * search too, since that is stored and searched with it. NotFoundError for no such chunk.
   */
  setChunkDisabled(knowledgeBaseId: string, chunkId: string, disabled: boolean): Promise<void>;
  /** Throws UnavailableError when the backend cannot answer; never returns an empty list for a failure. */
  search(query: SearchQuery, options?: SearchCallOptions): Promise<SearchHit[]>;
  /** Chunks by id, in the order asked; unknown ids are left out. */
  getChunks(ids: string[]): Promise<Chunk[]>;
  /** Chunks by document and index (a hit's neighbours), in the order asked; places with no chunk are left out. */
  getChunksAt(positions: ChunkPosition[]): Promise<Chunk[]>;
  /**
   * The stored chunks (enabled or not) of the knowledge bases whose text contains the request's
   * text (search/chunk-text-find.ts decides what matches), read in document and position order.
   */
  findChunks(request: ChunkFindRequest): Promise<ChunkFind>;
  /**
   * A document's live chunks in order with their vectors, and its document vector if it has one
   * (what an export writes: portability/).
   */
  documentWithVectors(knowledgeBaseId: string, documentId: string): Promise<StoredDocumentChunks>;
  close(): Promise<void>;

  // A change of embedding model (model-change.ts): the knowledge base's chunks get vectors of the
  // new model in a shadow beside the live vectors, which searches keep using until commitShadow
  // swaps the shadow in at once. While a shadow exists, the live writes above keep it consistent:
  // a deleted document leaves it, a disabled one is disabled in it, and a replaced document's
  // chunks lose their shadow vectors (they are the old model's; the change re-embeds them).

  /** A document's live chunks in order (what a change of model re-embeds). */
  documentChunks(knowledgeBaseId: string, documentId: string): Promise<Chunk[]>;
  /** Whether the document has a live document vector (a change of model embeds it again). */
  hasDocumentVector(knowledgeBaseId: string, documentId: string): Promise<boolean>;
  /** Creates an empty shadow of the given dimension, replacing any left by an interrupted change. */
  beginShadow(knowledgeBaseId: string, dimension: number): Promise<void>;
  /**
   * Stores the shadow vectors of a document's chunks (as documentChunks returned them); chunks no
   * longer live are skipped; no chunks takes the document out of the shadow (it has none live).
   * FailedPreconditionError when the dimension is not the shadow's.
   */
  writeShadowChunks(knowledgeBaseId: string, documentId: string, fileName: string, chunks: EmbeddedChunk[], documentVector?: Float32Array): Promise<void>;
  /** Documents with live chunks that lack shadow vectors (empty when the shadow is complete). */
  shadowPendingDocuments(knowledgeBaseId: string): Promise<string[]>;
  /** Makes the shadow the live vectors in one step and discards the old ones. */
  commitShadow(knowledgeBaseId: string): Promise<void>;
  /** Discards the shadow, if any; the live vectors stay as they are. */
  dropShadow(knowledgeBaseId: string): Promise<void>;
}

/** FailedPreconditionError unless every vector has the base's dimension (checked before any write). */
export function checkDimensions(knowledgeBaseId: string, dimension: number, documentId: string, chunks: readonly EmbeddedChunk[], documentVector?: Float32Array): void {
  for (const chunk of chunks) {
    if (chunk.vector.length !== dimension) {
      throw new FailedPreconditionError(`chunk ${chunk.id} has a ${chunk.vector.length}-dimensional vector; knowledge base ${knowledgeBaseId} stores ${dimension}`);
    }
  }
  if (documentVector && documentVector.length !== dimension) {
    throw new FailedPreconditionError(`document ${documentId} has a ${documentVector.length}-dimensional document vector; knowledge base ${knowledgeBaseId} stores ${dimension}`);
  }
}
