// The search engine on a search engine server (OpenSearch or Elasticsearch, through
// document-store-port.ts): one index per knowledge base behind an alias (quarry-chunks-<kb> →
// quarry-chunks-<kb>-v1, so a re-index can swap indices), shaped by one index template, holding the
// chunk records of search-documents.ts. BM25 runs over the field pre-segmented by text-segmenter.ts;
// kNN over the engine's vector field. Both lists go out in one _msearch and feed the shared ladder of
// search/hybrid-search.ts, like the embedded engine's, unless a backend answers hybrid natively
// (hybridOverride); either way every hit explains its rank and score in each list. What differs per engine (the vector mapping,
// the kNN query, the template's analysis) comes from a ChunkIndexDialect.
//
// Chunk indices do not refresh on a timer: each write refreshes once when it is complete, so a
// document's replacement (upsert the new chunks, delete the stale ones) becomes visible in one step.
// Documents written at the same time share that step: one search for what they had, one _bulk
// that writes and deletes for all of them and refreshes (writeDocuments).
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import type { Chunk, EmbeddedChunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError, throwIfCancelled, UnavailableError } from "../../../lib/errors.ts";
import { findRecord, isAlreadyGone, type DocumentStorePort, type MultiSearchItem, type StoredHit } from "./document-store-port.ts";
import { WriteBatches } from "./write-batches.ts";
import { DEFAULT_RRF_K, type EngineHit } from "../search/rrf-fusion.ts";
import { hybridSearch } from "../search/hybrid-search.ts";
import {
  bm25EngineHit,
  bm25SearchBody,
  bm25SearchBodyByForm,
  chunkFieldMappings,
  chunkFromSource,
  chunksAtSearchBody,
  CHUNK_SOURCE_EXCLUDES,
  chunksByIdSearchBody,
  documentChunksQuery,
  documentFlaggedChunksQuery,
  documentMarkerId,
  EDIT_FIELD_MAPPINGS,
  documentMarkerSource,
  documentRecordsQuery,
  indexSlug,
  PARENT_FIELD_MAPPING,
  toChunkSource,
  vectorEngineHit,
  type ChunkSource,
  type TermsForBases,
  type VectorField,
} from "./search-documents.ts";
import { checkDimensions, type ChunkCensus, type ChunkPosition, type ImportedDocumentChunks, type SearchCallOptions, type SearchEngine, type StoredDocumentChunks } from "../search/search-engine.ts";
import { findInPages, validateChunkFind, type ChunkFind, type ChunkFindRequest, type ScannedChunk } from "../search/chunk-text-find.ts";
import { orderByPosition, uniqueChunkIds } from "../search/search-query.ts";
import { averageRowLength, weightedQueryTerms, type KeywordIndexSize, type WeightedTerms } from "../search/query-terms.ts";
import { segmentForIndex } from "../search/text-segmenter.ts";
import { stemSegmented, stemTerm } from "../search/english-stems.ts";
import { replicationSettings } from "../../../lib/index-replication.ts";

/** Chunk records read per request when finding text. */
const FIND_PAGE_SIZE = 1_000;

/** The most records one document has in an index (its chunks; QUARRY_MAX_DOCUMENT_CHUNKS is below). */
const MAX_DOCUMENT_RECORDS = 10_000;

export interface DocumentStoreEngineOptions {
  /** Alias and index names start with this; tests use their own prefix and delete it afterwards. */
  indexPrefix?: string;
  shards?: number;
  /** Unset: one replica where the cluster has a second data node (index-replication.ts). */
  replicas?: number;
  /** Close the client on close(); false when the catalog shares it. */
  ownsClient?: boolean;
}

/** What the engines' chunk indices differ in. */
export interface ChunkIndexDialect {
  /** Template settings beyond shards, replicas, refresh interval and the terms' analysis. */
  templateSettings: Record<string, unknown>;
  /** How new chunk indices analyse the search_terms field; asked once per process, before the first index is made. */
  termsAnalysis(): Promise<TermsAnalysis>;
  vectorMapping(dimension: number): Record<string, unknown>;
  /** The top-size kNN request over one vector field, filtered by the query's chunk filters. */
  knnBody(query: SearchQuery, vector: Float32Array, size: number, field: VectorField): Record<string, unknown>;
}

/**
 * How a chunk index's search_terms field is analysed. Each index records its analysis's name in its
 * mapping's _meta (terms_analysis), and Quarry stems what it writes to and asks of an index only when
 * that name is QUARRY_STEMS_TERMS, so bases made before an engine changed its choice keep working as
 * they were, and no search mixes stemmed with unstemmed terms.
 */
export interface TermsAnalysis {
  /** ENGINE_STEMS_TERMS or QUARRY_STEMS_TERMS. */
  name: typeof ENGINE_STEMS_TERMS | typeof QUARRY_STEMS_TERMS;
  /** The template's index.analysis settings ({} for none). */
  settings: Record<string, unknown>;
  /** The analyzer of the pre-segmented search_terms field (must split on whitespace only). */
  searchTermsAnalyzer: string;
}

/** The engine's analyzer stems English terms (porter_stem); Quarry sends terms as segmented. */
export const ENGINE_STEMS_TERMS = "engine_porter";
/** The engine cannot stem: Quarry stems the segmented terms itself (english-stems.ts), on both sides. */
export const QUARRY_STEMS_TERMS = "quarry_porter";

/**
 * The engine stems: the text arrives segmented (text-segmenter.ts), so splitting on whitespace is all
 * the tokenizing left; porter_stem (the analysis-common module) then stems English terms like SQLite's
 * FTS5 porter tokenizer, and match queries on the field go through the same analyzer.
 */
export const ENGINE_PORTER_ANALYSIS: TermsAnalysis = {
  name: ENGINE_STEMS_TERMS,
  settings: { analyzer: { quarry_terms: { type: "custom", tokenizer: "whitespace", filter: ["lowercase", "porter_stem"] } } },
  searchTermsAnalyzer: "quarry_terms",
};

/** A hybrid search's inputs, for a backend that can answer it natively. */
export interface HybridSearch {
  index: string;
  query: SearchQuery;
  /** The question's terms in their BM25 weight groups (query-terms.ts); none without searchable words. */
  terms: WeightedTerms[];
  vector: Float32Array;
  candidates: number;
  k: number;
}

/** One document's replacement, waiting for its batch. */
interface DocumentWrite {
  knowledgeBaseId: string;
  documentId: string;
  fileName: string;
  chunks: EmbeddedChunk[];
  documentVector?: Float32Array;
  /** The new chunk ids: stored chunks of the document outside it are deleted. */
  keep: ReadonlySet<string>;
}

export class DocumentStoreEngine implements SearchEngine {
  protected readonly prefix: string;
  private readonly dimensions = new Map<string, number>();
  /** Each knowledge base's shadow index while its model changes (one index process runs a change). */
  private readonly shadows = new Map<string, { index: string; dimension: number; quarryStems: boolean }>();
  /** Whether Quarry stems each base's terms itself (its index's _meta.terms_analysis, read with its dimension). */
  private readonly quarryStems = new Map<string, boolean>();
  /** Bases whose index this process has given the document-vector field (indices made before it lack it). */
  private readonly documentFieldReady = new Map<string, Promise<void>>();
  /** Whether a base's index holds document vectors: true once seen; a "no" is asked again after a while. */
  private readonly documentVectorsSeen = new Map<string, { stores: boolean; at: number }>();
  /** Each base's keyword field size, for weighing a question's terms; read again after a while. */
  private readonly keywordSizes = new Map<string, { size: KeywordIndexSize; at: number }>();
  private templateReady: Promise<TermsAnalysis> | undefined;
  /** Indices known to map the parent field (see ensureParentField). */
  private readonly parentFieldReady = new Map<string, Promise<void>>();
  /** Indices known to map the edit fields (see ensureEditFields). */
  private readonly editFieldsReady = new Map<string, Promise<void>>();
  private closed = false;
  /** Documents' chunk writes joined per index (write-batches.ts). */
  private readonly liveWrites = new WriteBatches<DocumentWrite>((alias, writes) => this.writeDocuments(alias, writes), { maxWrites: 32, maxWeight: 2_000 });
  /** Indices whose last write may be stored but not yet refreshed (a failed batch, or any index at start-up). */
  private readonly cleanIndices = new Set<string>();

  constructor(
    private readonly store: DocumentStorePort,
    private readonly dialect: ChunkIndexDialect,
    protected readonly options: DocumentStoreEngineOptions = {},
  ) {
    this.prefix = options.indexPrefix ?? "quarry-chunks-";
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(this.prefix)) throw new InvalidInputError(`index prefix ${this.prefix} is not a valid ${store.engine} index name start`);
  }

  /** The alias a knowledge base's chunks are read and written through. */
  aliasFor(knowledgeBaseId: string): string {
    return `${this.prefix}${indexSlug(knowledgeBaseId)}`;
  }

  async ensureKnowledgeBase(knowledgeBaseId: string, embeddingDimension: number): Promise<void> {
    if (!knowledgeBaseId) throw new InvalidInputError("a knowledge base id is required");
    if (!Number.isInteger(embeddingDimension) || embeddingDimension <= 0) {
      throw new InvalidInputError(`embedding dimension must be a positive integer, got ${embeddingDimension}`);
    }
    await this.call("ensure knowledge base", async () => {
      const analysis = await this.ensureTemplate();
      const existing = await this.readDimension(knowledgeBaseId);
      if (existing === undefined) {
        try {
          await this.store.createIndex(`${this.aliasFor(knowledgeBaseId)}-v1`, {
            aliases: { [this.aliasFor(knowledgeBaseId)]: {} },
            mappings: {
              _meta: { knowledge_base_id: knowledgeBaseId, dimension: embeddingDimension, terms_analysis: analysis.name },
              properties: this.vectorMappings(embeddingDimension),
            },
          });
          this.dimensions.set(knowledgeBaseId, embeddingDimension);
          this.quarryStems.set(knowledgeBaseId, analysis.name === QUARRY_STEMS_TERMS);
          return;
        } catch (error) {
          // Another process created it first: fall through and compare dimensions.
          if (this.store.errors.errorType(error) !== "resource_already_exists_exception") throw error;
        }
      }
      const dimension = existing ?? (await this.readDimension(knowledgeBaseId));
      if (dimension !== embeddingDimension) {
        throw new FailedPreconditionError(`knowledge base ${knowledgeBaseId} stores ${dimension}-dimensional vectors, not ${embeddingDimension}`);
      }
    });
  }

  async dropKnowledgeBase(knowledgeBaseId: string): Promise<void> {
    await this.call("drop knowledge base", async () => {
      this.dimensions.delete(knowledgeBaseId);
      this.quarryStems.delete(knowledgeBaseId);
      this.documentFieldReady.delete(knowledgeBaseId);
      this.documentVectorsSeen.delete(knowledgeBaseId);
      this.keywordSizes.delete(knowledgeBaseId);
      await this.deleteShadowIndex(knowledgeBaseId);
      try {
        const indices = await this.store.aliasIndices(this.aliasFor(knowledgeBaseId));
        if (indices.length > 0) await this.store.deleteIndices(indices);
      } catch (error) {
        if (!this.store.errors.isResponseError(error, 404)) throw error;
      }
    });
  }

  async replaceDocumentChunks(knowledgeBaseId: string, documentId: string, fileName: string, chunks: EmbeddedChunk[], documentVector?: Float32Array): Promise<void> {
    const seen = uniqueChunkIds(chunks);
    await this.call("replace document chunks", async () => {
      const dimension = await this.currentDimension(knowledgeBaseId, chunks[0]?.vector.length ?? documentVector?.length);
      checkDimensions(knowledgeBaseId, dimension, documentId, chunks, documentVector);
      const alias = await this.prepareFields(knowledgeBaseId, dimension, chunks, documentVector !== undefined);
      await this.liveWrites.write(alias, { knowledgeBaseId, documentId, fileName, chunks, documentVector, keep: seen }, { id: documentId, weight: chunks.length + 1 });
      // The shadow's vectors of this document were of its old chunks: the change re-embeds it.
      const shadow = this.shadows.get(knowledgeBaseId);
      if (shadow) await this.store.deleteWhere("replace document chunks", shadow.index, documentRecordsQuery(documentId), { refresh: true, alsoIds: [documentMarkerId(documentId)] });
    });
  }

  async importDocuments(knowledgeBaseId: string, documents: ImportedDocumentChunks[]): Promise<void> {
    await this.call("import documents", async () => {
      const dimension = await this.requireDimension(knowledgeBaseId);
      for (const d of documents) checkDimensions(knowledgeBaseId, dimension, d.documentId, d.chunks, d.documentVector);
      const chunks = documents.flatMap((d) => d.chunks);
      const alias = await this.prepareFields(knowledgeBaseId, dimension, chunks, documents.some((d) => d.documentVector !== undefined));
      const stems = await this.stemsTerms(knowledgeBaseId);
      // The documents are new to the base: no search for stored records, no deletes, and no refresh
      // (finishImport refreshes once for the whole import).
      const operations = documents.flatMap((d) => [
        { index: { _index: alias, _id: documentMarkerId(d.documentId) } },
        documentMarkerSource(knowledgeBaseId, d.documentId, d.enabled, d.fileName),
        ...this.chunkOperations(alias, knowledgeBaseId, d.documentId, d.fileName, d.enabled, d.chunks, d.documentVector, stems),
      ]);
      if (operations.length === 0) return;
      this.cleanIndices.delete(alias);
      const items = await this.store.bulkItems(operations, { refresh: false, requireAlias: true });
      const failed = items.find((item) => item.error !== undefined);
      if (failed) throw this.store.errors.itemError("import documents", failed.status, failed.error);
    });
  }

  async finishImport(knowledgeBaseId: string): Promise<void> {
    await this.call("finish import", async () => {
      const alias = this.aliasFor(knowledgeBaseId);
      await this.store.refresh(alias);
      this.cleanIndices.add(alias);
    });
  }

  /** Pages through every document's chunk count with a composite aggregation, so no base is too big for it. */
  async chunkCensus(knowledgeBaseId: string): Promise<ChunkCensus> {
    return this.call("count chunks", async () => {
      const census: ChunkCensus = { chunks: new Map(), withoutVector: 0 };
      const alias = this.aliasFor(knowledgeBaseId);
      let after: Record<string, unknown> | undefined;
      for (;;) {
        let result;
        try {
          result = await this.store.search<never>(alias, {
            size: 0,
            query: { term: { record_type: "chunk" } },
            aggs: {
              documents: { composite: { size: 1_000, sources: [{ document: { terms: { field: "document_id" } } }], ...(after ? { after } : {}) } },
              ...(after ? {} : { without_vector: { filter: { bool: { must_not: [{ exists: { field: "embedding" } }] } } } }),
            },
          });
        } catch (error) {
          if (this.store.errors.isIndexNotFound(error)) return census;
          throw error;
        }
        const aggs = result.aggregations as { documents: { buckets: { key: { document: string }; doc_count: number }[]; after_key?: Record<string, unknown> }; without_vector?: { doc_count: number } };
        if (aggs.without_vector) census.withoutVector = aggs.without_vector.doc_count;
        for (const bucket of aggs.documents.buckets) census.chunks.set(bucket.key.document, bucket.doc_count);
        if (aggs.documents.buckets.length === 0 || !aggs.documents.after_key) return census;
        after = aggs.documents.after_key;
      }
    });
  }

  async deleteDocument(knowledgeBaseId: string, documentId: string): Promise<void> {
    await this.call("delete document", async () => {
      try {
        // The marker is deleted too, even if it was written after the last refresh.
        await this.store.deleteWhere("delete document", this.aliasFor(knowledgeBaseId), documentRecordsQuery(documentId), {
          refresh: true,
          requireAlias: true,
          alsoIds: [documentMarkerId(documentId)],
        });
        const shadow = this.shadows.get(knowledgeBaseId);
        if (shadow) await this.store.deleteWhere("delete document", shadow.index, documentRecordsQuery(documentId), { refresh: true, alsoIds: [documentMarkerId(documentId)] });
      } catch (error) {
        // Nothing stored for that knowledge base: nothing to delete.
        if (!this.store.errors.isIndexNotFound(error)) throw error;
      }
    });
  }

  async setDocumentEnabled(knowledgeBaseId: string, documentId: string, enabled: boolean): Promise<void> {
    await this.call("set document enabled", async () => {
      await this.requireDimension(knowledgeBaseId);
      const alias = this.aliasFor(knowledgeBaseId);
      await this.store.put(alias, documentMarkerId(documentId), documentMarkerSource(knowledgeBaseId, documentId, enabled), { refresh: false, requireAlias: true });
      // Enabling a document leaves the chunks disabled by hand out of search.
      const chunks = enabled ? documentFlaggedChunksQuery(documentId) : documentChunksQuery(documentId);
      await this.store.updateWhere("set document enabled", alias, chunks, { enabled }, { refresh: true, requireAlias: true });
      const shadow = this.shadows.get(knowledgeBaseId);
      if (shadow) {
        await this.store.put(shadow.index, documentMarkerId(documentId), documentMarkerSource(knowledgeBaseId, documentId, enabled), { refresh: false });
        await this.store.updateWhere("set document enabled", shadow.index, chunks, { enabled }, { refresh: true });
      }
    });
  }

  async putChunk(knowledgeBaseId: string, documentId: string, fileName: string, chunk: EmbeddedChunk): Promise<void> {
    await this.call("put chunk", async () => {
      const dimension = await this.requireDimension(knowledgeBaseId);
      if (chunk.vector.length !== dimension) {
        throw new FailedPreconditionError(`chunk ${chunk.id} has a ${chunk.vector.length}-dimensional vector; knowledge base ${knowledgeBaseId} stores ${dimension}`);
      }
      const alias = this.aliasFor(knowledgeBaseId);
      await this.ensureEditFields(alias);
      const source = {
        ...toChunkSource(chunk, knowledgeBaseId, documentId, fileName, await this.documentEnabled(alias, documentId)),
        search_terms: searchTerms(chunk, await this.stemsTerms(knowledgeBaseId)),
        embedding: Array.from(chunk.vector),
      };
      // A partial update (an insert for a new id): a document vector on the record stays.
      await this.store.bulk("put chunk", [{ update: { _index: alias, _id: chunk.id } }, { doc: source, doc_as_upsert: true }], { refresh: true, requireAlias: true });
      // The shadow's vector was of the old text: the running change of model embeds the document again.
      const shadow = this.shadows.get(knowledgeBaseId);
      if (shadow) await this.store.deleteWhere("put chunk", shadow.index, { ids: { values: [chunk.id] } }, { refresh: true });
    });
  }

  async setChunkDisabled(knowledgeBaseId: string, chunkId: string, disabled: boolean): Promise<void> {
    await this.call("set chunk disabled", async () => {
      await this.requireDimension(knowledgeBaseId);
      const alias = this.aliasFor(knowledgeBaseId);
      await this.ensureEditFields(alias);
      const stored = await findRecord<{ document_id?: string; record_type?: string }>(this.store, alias, chunkId, ["document_id", "record_type"]);
      if (!stored || stored.source.record_type !== "chunk" || !stored.source.document_id) throw new NotFoundError(`no chunk ${chunkId} in knowledge base ${knowledgeBaseId}`);
      const fields = { disabled, enabled: !disabled && (await this.documentEnabled(alias, stored.source.document_id)) };
      await this.store.updateWhere("set chunk disabled", alias, { ids: { values: [chunkId] } }, fields, { refresh: true, requireAlias: true });
      const shadow = this.shadows.get(knowledgeBaseId);
      if (shadow) await this.store.updateWhere("set chunk disabled", shadow.index, { ids: { values: [chunkId] } }, fields, { refresh: true });
    });
  }

  async search(query: SearchQuery, options: SearchCallOptions = {}): Promise<SearchHit[]> {
    return this.searchChunks(query, undefined, options.signal);
  }

  async getChunks(ids: string[]): Promise<Chunk[]> {
    if (ids.length === 0) return [];
    return this.call("get chunks", async () => {
      const unique = [...new Set(ids)];
      const result = await this.store.search<ChunkSource>(`${this.prefix}*`, chunksByIdSearchBody(unique), { ignoreUnavailable: true });
      const byId = new Map<string, Chunk>();
      for (const hit of result.hits) if (hit._source) byId.set(hit._id, chunkFromSource(hit._source));
      return ids.flatMap((id) => byId.get(id) ?? []);
    });
  }

  async getChunksAt(positions: ChunkPosition[]): Promise<Chunk[]> {
    if (positions.length === 0) return [];
    return this.call("get chunks at positions", async () => {
      const indices = [...new Set(positions.map((p) => this.aliasFor(p.knowledgeBaseId)))].join(",");
      const result = await this.store.search<ChunkSource>(indices, chunksAtSearchBody(positions), { ignoreUnavailable: true });
      return orderByPosition(positions, result.hits.flatMap((hit) => (hit._source ? [chunkFromSource(hit._source)] : [])));
    });
  }

  async findChunks(request: ChunkFindRequest): Promise<ChunkFind> {
    validateChunkFind(request);
    await this.call("find chunks", () => Promise.all(request.knowledgeBaseIds.map((id) => this.requireDimension(id))));
    return findInPages(this.chunkPages(request), request);
  }

  /** The bases' chunk records in pages of FIND_PAGE_SIZE, by search_after (no 10,000-hit window). */
  private async *chunkPages(request: ChunkFindRequest): AsyncGenerator<ScannedChunk[]> {
    const index = request.knowledgeBaseIds.map((id) => this.aliasFor(id)).join(",");
    const filter: Record<string, unknown>[] = [{ term: { record_type: "chunk" } }];
    if (request.documentIds.length > 0) filter.push({ terms: { document_id: request.documentIds } });
    let after: unknown[] | undefined;
    for (;;) {
      const result = await this.call("find chunks", () =>
        this.store.search<ChunkSource>(index, {
          size: FIND_PAGE_SIZE,
          _source: { excludes: CHUNK_SOURCE_EXCLUDES },
          query: { bool: { filter } },
          sort: [{ knowledge_base_id: "asc" }, { document_id: "asc" }, { chunk_index: "asc" }, { chunk_id: "asc" }],
          ...(after ? { search_after: after } : {}),
        }),
      );
      const page = result.hits.flatMap((hit) => (hit._source ? [{ chunk: chunkFromSource(hit._source), fileName: hit._source.file_name, enabled: hit._source.enabled }] : []));
      if (page.length > 0) yield page;
      if (result.hits.length < FIND_PAGE_SIZE) return;
      after = result.hits[result.hits.length - 1].sort;
    }
  }

  async hasDocumentVector(knowledgeBaseId: string, documentId: string): Promise<boolean> {
    return this.call("has document vector", async () => {
      const result = await this.store.search(this.aliasFor(knowledgeBaseId), {
        size: 1,
        _source: false,
        query: { bool: { filter: [{ term: { record_type: "chunk" } }, { term: { document_id: documentId } }, { exists: { field: "document_embedding" } }] } },
      });
      return result.hits.length > 0;
    });
  }

  async documentWithVectors(knowledgeBaseId: string, documentId: string): Promise<StoredDocumentChunks> {
    return this.call("document with vectors", async () => {
      const result = await this.store.search<ChunkSource & { embedding?: number[]; document_embedding?: number[] }>(this.aliasFor(knowledgeBaseId), {
        size: MAX_DOCUMENT_RECORDS,
        _source: { excludes: ["search_terms"] },
        query: documentChunksQuery(documentId),
        sort: [{ chunk_index: "asc" }],
      });
      const chunks: EmbeddedChunk[] = [];
      let documentVector: Float32Array | undefined;
      for (const { _source: source } of result.hits) {
        if (!source) continue;
        if (!source.embedding) throw new FailedPreconditionError(`chunk ${source.chunk_id} of document ${documentId} has no vector in its stored source`);
        chunks.push({ ...chunkFromSource(source), vector: Float32Array.from(source.embedding) });
        if (source.document_embedding) documentVector = Float32Array.from(source.document_embedding);
      }
      return { chunks, ...(documentVector ? { documentVector } : {}) };
    });
  }

  async documentChunks(knowledgeBaseId: string, documentId: string): Promise<Chunk[]> {
    return this.call("document chunks", async () => {
      const result = await this.store.search<ChunkSource>(this.aliasFor(knowledgeBaseId), {
        size: MAX_DOCUMENT_RECORDS,
        _source: { excludes: CHUNK_SOURCE_EXCLUDES },
        query: documentChunksQuery(documentId),
        sort: [{ chunk_index: "asc" }],
      });
      return result.hits.flatMap((hit) => (hit._source ? [chunkFromSource(hit._source)] : []));
    });
  }

  async beginShadow(knowledgeBaseId: string, dimension: number): Promise<void> {
    if (!Number.isInteger(dimension) || dimension <= 0) throw new InvalidInputError(`embedding dimension must be a positive integer, got ${dimension}`);
    await this.call("begin shadow", async () => {
      await this.requireDimension(knowledgeBaseId);
      const alias = this.aliasFor(knowledgeBaseId);
      // quarry-chunks-<kb>-v<n> behind the alias; the shadow is the next generation.
      const generations = (await this.store.aliasIndices(alias)).map((index) => Number(/-v(\d+)$/.exec(index)?.[1] ?? 1));
      const index = `${alias}-v${Math.max(1, ...generations) + 1}`;
      this.shadows.delete(knowledgeBaseId);
      await this.deleteIndexIfPresent(index);
      // The new index follows the engine's analysis of today, whatever the live one recorded: a
      // change of model also moves a base made before stemming onto it.
      const analysis = await this.ensureTemplate();
      await this.store.createIndex(index, {
        mappings: {
          _meta: { knowledge_base_id: knowledgeBaseId, dimension, terms_analysis: analysis.name },
          properties: this.vectorMappings(dimension),
        },
      });
      this.shadows.set(knowledgeBaseId, { index, dimension, quarryStems: analysis.name === QUARRY_STEMS_TERMS });
    });
  }

  async writeShadowChunks(knowledgeBaseId: string, documentId: string, fileName: string, chunks: EmbeddedChunk[], documentVector?: Float32Array): Promise<void> {
    const seen = uniqueChunkIds(chunks);
    await this.call("write shadow chunks", async () => {
      const shadow = this.requireShadow(knowledgeBaseId);
      for (const chunk of chunks) {
        if (chunk.vector.length !== shadow.dimension) {
          throw new FailedPreconditionError(`chunk ${chunk.id} has a ${chunk.vector.length}-dimensional vector; the new model's are ${shadow.dimension}`);
        }
      }
      await this.ensureParentField(shadow.index, chunks);
      if (chunks.some(hasEdits)) await this.ensureEditFields(shadow.index);
      if (documentVector && documentVector.length !== shadow.dimension) {
        throw new FailedPreconditionError(`document ${documentId} has a ${documentVector.length}-dimensional document vector; the new model's are ${shadow.dimension}`);
      }
      // No live chunks (the document was deleted, on any index replica): nothing of it may stay.
      if (chunks.length === 0) {
        await this.store.deleteWhere("write shadow chunks", shadow.index, documentRecordsQuery(documentId), { refresh: true, alsoIds: [documentMarkerId(documentId)] });
        return;
      }
      const enabled = await this.documentEnabled(this.aliasFor(knowledgeBaseId), documentId);
      const operations: Record<string, unknown>[] = [
        { index: { _index: shadow.index, _id: documentMarkerId(documentId) } },
        documentMarkerSource(knowledgeBaseId, documentId, enabled, fileName),
      ];
      operations.push(...this.chunkOperations(shadow.index, knowledgeBaseId, documentId, fileName, enabled, chunks, documentVector, shadow.quarryStems));
      await this.store.bulk("write shadow chunks", operations, { refresh: false });
      await this.store.deleteWhere("write shadow chunks", shadow.index, documentChunksQuery(documentId, [...seen]), { refresh: false });
      await this.store.refresh(shadow.index);
    });
  }

  async shadowPendingDocuments(knowledgeBaseId: string): Promise<string[]> {
    return this.call("shadow pending documents", async () => {
      const shadow = this.requireShadow(knowledgeBaseId);
      const [live, shadowed] = await Promise.all([this.chunkCountsByDocument(this.aliasFor(knowledgeBaseId)), this.chunkCountsByDocument(shadow.index)]);
      return [...live].filter(([documentId, count]) => shadowed.get(documentId) !== count).map(([documentId]) => documentId).sort();
    });
  }

  async commitShadow(knowledgeBaseId: string): Promise<void> {
    await this.call("commit shadow", async () => {
      const shadow = this.requireShadow(knowledgeBaseId);
      const alias = this.aliasFor(knowledgeBaseId);
      const live = await this.store.aliasIndices(alias);
      await this.store.refresh(shadow.index);
      // One aliases update: a search reads either the old index or the new one, never neither.
      await this.store.swapAlias(alias, live, shadow.index);
      this.shadows.delete(knowledgeBaseId);
      this.dimensions.set(knowledgeBaseId, shadow.dimension);
      this.quarryStems.set(knowledgeBaseId, shadow.quarryStems);
      this.documentFieldReady.delete(knowledgeBaseId);
      this.documentVectorsSeen.delete(knowledgeBaseId);
      await this.store.deleteIndices(live);
    });
  }

  async dropShadow(knowledgeBaseId: string): Promise<void> {
    await this.call("drop shadow", () => this.deleteShadowIndex(knowledgeBaseId));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.options.ownsClient) await this.store.close();
  }

  /**
   * The search, with hybridOverride answering a hybrid search natively when it returns hits (before
   * min-score and top-k); undefined fuses the _msearch lists. A search whose signal has fired is
   * not sent (the client has no signal to end a request already sent: 3.x only aborts its promise).
   */
  protected async searchChunks(query: SearchQuery, hybridOverride?: (search: HybridSearch) => Promise<SearchHit[]> | undefined, signal?: AbortSignal): Promise<SearchHit[]> {
    throwIfCancelled(signal, "search");
    // A native hybrid query fuses BM25 and the chunk vectors as they are; a base with document
    // vectors needs its vector list to combine both levels first (search/document-level.ts), which
    // only the shared ladder does.
    if (hybridOverride && query.mode === "hybrid" && (await this.storesDocumentVectors(query.knowledgeBaseIds))) hybridOverride = undefined;
    const index = query.knowledgeBaseIds.map((id) => this.aliasFor(id)).join(",");
    // The question is weighed against the average chunk of the bases searched together (query-terms.ts).
    const terms = weightedQueryTerms(query.text, averageRowLength(await this.keywordIndexSizes(query.knowledgeBaseIds)));
    const forms = await this.call("search", () => this.termForms(query.knowledgeBaseIds, terms));
    // Bases whose terms differ in form are searched each with its own form: only the _msearch path can.
    if (forms.length > 1) hybridOverride = undefined;
    const bm25Body = (limit: number) => (forms.length > 1 ? bm25SearchBodyByForm(query, forms, limit) : bm25SearchBody(query, forms[0]?.groups ?? terms, limit));
    return hybridSearch(query, {
      dimensions: (knowledgeBaseIds) =>
        this.call("search", () =>
          Promise.all(knowledgeBaseIds.map(async (knowledgeBaseId) => ({ knowledgeBaseId, dimension: await this.currentDimension(knowledgeBaseId, query.vector?.length || undefined) }))),
        ),
      // The lists in one _msearch round trip; a query without searchable words sends no BM25 search.
      lists: (request) =>
        this.call("search", async () => {
          // The look-ups above were round trips too: the caller may have gone meanwhile.
          throwIfCancelled(signal, "search");
          const searches: { name: "bm25" | "vector" | "documentVector"; body: Record<string, unknown>; toHit: (hit: StoredHit<ChunkSource>) => EngineHit }[] = [];
          if (request.bm25 && terms.length > 0) searches.push({ name: "bm25", body: bm25Body(request.bm25.limit), toHit: bm25Hit });
          if (request.vector) searches.push({ name: "vector", body: this.dialect.knnBody(query, request.vector.vector, request.vector.limit, "embedding"), toHit: vectorHit });
          if (request.documentVector) {
            // An index made before document vectors gets the field first: a kNN query on an unmapped field fails.
            await Promise.all(query.knowledgeBaseIds.map(async (id) => this.ensureDocumentField(id, await this.requireDimension(id))));
            searches.push({ name: "documentVector", body: this.dialect.knnBody(query, request.documentVector.vector, request.documentVector.limit, "document_embedding"), toHit: vectorHit });
          }
          if (searches.length === 0) return {};
          const results = await this.msearch(index, searches.map((search) => search.body), searches.map((search) => search.toHit));
          return Object.fromEntries(searches.map((search, i) => [search.name, results[i]]));
        }),
      fuseNatively: hybridOverride
        ? (request) => {
            throwIfCancelled(signal, "search");
            const native = hybridOverride({ index, query, terms: forms[0]?.groups ?? terms, vector: request.vector.vector, candidates: request.vector.limit, k: query.rrfK ?? DEFAULT_RRF_K });
            return native && this.call("search", () => native);
          }
        : undefined,
    });
  }

  protected async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new UnavailableError(`${what}: the search engine is closed`);
    try {
      return await fn();
    } catch (error) {
      throw this.store.errors.toDomainError(error, what);
    }
  }

  /**
   * A chunk index made before parents were stored has a strict mapping without the field: add it
   * (once per index and process) before the first chunk with a parent is written there.
   */
  private async ensureParentField(index: string, chunks: readonly EmbeddedChunk[]): Promise<void> {
    if (!chunks.some((c) => c.parent)) return;
    let ready = this.parentFieldReady.get(index);
    if (!ready) {
      ready = this.store.putMapping(index, PARENT_FIELD_MAPPING).catch((error: unknown) => {
        this.parentFieldReady.delete(index);
        throw error;
      });
      this.parentFieldReady.set(index, ready);
    }
    await ready;
  }

  /** The edit fields on an index made before chunks were edited (once per index and process). */
  private async ensureEditFields(index: string): Promise<void> {
    let ready = this.editFieldsReady.get(index);
    if (!ready) {
      ready = this.store.putMapping(index, EDIT_FIELD_MAPPINGS);
      this.editFieldsReady.set(index, ready);
      ready.catch(() => this.editFieldsReady.delete(index));
    }
    await ready;
  }

  /** Puts the chunk indices' template (once per process); returns the analysis new indices get. */
  private ensureTemplate(): Promise<TermsAnalysis> {
    this.templateReady ??= this.dialect
      .termsAnalysis()
      .then(async (analysis) => {
        await this.store.putIndexTemplate(`${this.prefix}template`, {
          index_patterns: [`${this.prefix}*`],
          template: {
            settings: {
              ...this.dialect.templateSettings,
              ...(Object.keys(analysis.settings).length > 0 ? { analysis: analysis.settings } : {}),
              ...replicationSettings(this.options.replicas, this.options.shards),
              refresh_interval: "-1",
            },
            mappings: { dynamic: "strict", _meta: {}, properties: chunkFieldMappings(analysis.searchTermsAnalyzer) },
          },
        });
        return analysis;
      })
      .catch((error: unknown) => {
        this.templateReady = undefined;
        throw error;
      });
    return this.templateReady;
  }

  private async readDimension(knowledgeBaseId: string): Promise<number | undefined> {
    const cached = this.dimensions.get(knowledgeBaseId);
    if (cached !== undefined) return cached;
    try {
      const meta = await this.store.mappingMeta(this.aliasFor(knowledgeBaseId));
      const dimension = meta?.dimension;
      if (typeof dimension !== "number") return undefined;
      this.dimensions.set(knowledgeBaseId, dimension);
      // An index made before the analysis was recorded was never stemmed by Quarry.
      this.quarryStems.set(knowledgeBaseId, meta?.terms_analysis === QUARRY_STEMS_TERMS);
      return dimension;
    } catch (error) {
      if (this.store.errors.isIndexNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Whether Quarry stems the terms it writes to and asks of a base's index (see TermsAnalysis). */
  private async stemsTerms(knowledgeBaseId: string): Promise<boolean> {
    if (!this.quarryStems.has(knowledgeBaseId)) {
      // Both are read from the index's _meta at once; a base without an index finds nothing either way.
      this.dimensions.delete(knowledgeBaseId);
      await this.readDimension(knowledgeBaseId);
    }
    return this.quarryStems.get(knowledgeBaseId) ?? false;
  }

  /**
   * The question's weighted terms as each base's index stores them: one form for bases Quarry stems
   * for and one for the rest, each with the bases it searches (a single form covers them all).
   */
  private async termForms(knowledgeBaseIds: string[], terms: WeightedTerms[]): Promise<TermsForBases[]> {
    const stems = await Promise.all(knowledgeBaseIds.map((id) => this.stemsTerms(id)));
    const forms: TermsForBases[] = [];
    for (const stemmed of [false, true]) {
      const ids = knowledgeBaseIds.filter((_, i) => stems[i] === stemmed);
      if (ids.length > 0) forms.push({ knowledgeBaseIds: ids, groups: stemmed ? terms.map((g) => ({ ...g, terms: g.terms.map(stemTerm) })) : terms });
    }
    return forms;
  }

  /** The bases' keyword field sizes, each read at most once a minute (a minute-old average is as good). */
  private keywordIndexSizes(knowledgeBaseIds: string[]): Promise<KeywordIndexSize[]> {
    return Promise.all(
      knowledgeBaseIds.map(async (id) => {
        const known = this.keywordSizes.get(id);
        if (known && Date.now() - known.at < 60_000) return known.size;
        const { records, terms } = await this.call("search", async () => {
          try {
            return await this.store.fieldSize(this.aliasFor(id), "search_terms");
          } catch (error) {
            // A base whose index is gone finds nothing either: the search itself says so.
            if (this.store.errors.isResponseError(error, 404)) return { records: 0, terms: 0 };
            throw error;
          }
        });
        const size = { rows: records, terms };
        this.keywordSizes.set(id, { size, at: Date.now() });
        return size;
      }),
    );
  }

  private async storesDocumentVectors(knowledgeBaseIds: string[]): Promise<boolean> {
    const answers = await Promise.all(
      knowledgeBaseIds.map(async (id) => {
        const seen = this.documentVectorsSeen.get(id);
        if (seen && (seen.stores || Date.now() - seen.at < 60_000)) return seen.stores;
        const result = await this.call("search", () =>
          this.store.search(this.aliasFor(id), { size: 1, _source: false, query: { exists: { field: "document_embedding" } } }, { ignoreUnavailable: true }),
        );
        const stores = result.hits.length > 0;
        this.documentVectorsSeen.set(id, { stores, at: Date.now() });
        return stores;
      }),
    );
    return answers.some(Boolean);
  }

  private vectorMappings(dimension: number): Record<string, unknown> {
    return { embedding: this.dialect.vectorMapping(dimension), document_embedding: this.dialect.vectorMapping(dimension) };
  }

  /** Maps the fields the chunks about to be written need (parents, edits, document vectors); returns the base's alias. */
  private async prepareFields(knowledgeBaseId: string, dimension: number, chunks: readonly EmbeddedChunk[], documentVectors: boolean): Promise<string> {
    const alias = this.aliasFor(knowledgeBaseId);
    await this.ensureParentField(alias, chunks);
    if (chunks.some(hasEdits)) await this.ensureEditFields(alias);
    if (documentVectors) {
      await this.ensureDocumentField(knowledgeBaseId, dimension);
      this.documentVectorsSeen.set(knowledgeBaseId, { stores: true, at: Date.now() });
    }
    return alias;
  }

  /** Adds the document-vector field to the base's live index once per process (a no-op when it is there). */
  private ensureDocumentField(knowledgeBaseId: string, dimension: number): Promise<void> {
    let ready = this.documentFieldReady.get(knowledgeBaseId);
    if (!ready) {
      ready = this.store.putMapping(this.aliasFor(knowledgeBaseId), { document_embedding: this.dialect.vectorMapping(dimension) });
      this.documentFieldReady.set(knowledgeBaseId, ready);
      ready.catch(() => this.documentFieldReady.delete(knowledgeBaseId));
    }
    return ready;
  }

  /**
   * One batch of document replacements in one index: what the documents hold now (their markers'
   * enabled flags and their chunk ids, as of the last refresh — every write here ends with one),
   * then one _bulk that writes each document's marker and chunks, deletes its chunks the new set no
   * longer holds, and refreshes, so readers see each document's old set until they see its new one.
   * A document never written has nothing to delete; none needs a delete-by-query.
   */
  private async writeDocuments(alias: string, writes: DocumentWrite[]): Promise<(Error | undefined)[]> {
    // A batch that failed part way (or a crash: any index at start-up) may have stored records no
    // refresh shows yet, which the search below would miss and leave behind: refresh first.
    if (!this.cleanIndices.has(alias)) await this.store.refresh(alias);
    this.cleanIndices.delete(alias);
    const stored = await this.storedRecords(alias, writes.map((w) => w.documentId));
    const bases = [...new Set(writes.map((w) => w.knowledgeBaseId))];
    const stems = new Map(await Promise.all(bases.map(async (id) => [id, await this.stemsTerms(id)] as const)));
    const operations: Record<string, unknown>[] = [];
    const owners: number[] = [];
    writes.forEach((w, i) => {
      const enabled = stored.get(w.documentId)?.enabled ?? true;
      operations.push({ index: { _index: alias, _id: documentMarkerId(w.documentId) } }, documentMarkerSource(w.knowledgeBaseId, w.documentId, enabled, w.fileName));
      operations.push(...this.chunkOperations(alias, w.knowledgeBaseId, w.documentId, w.fileName, enabled, w.chunks, w.documentVector, stems.get(w.knowledgeBaseId)!));
      owners.push(...Array.from({ length: w.chunks.length + 1 }, () => i));
    });
    writes.forEach((w, i) => {
      for (const id of stored.get(w.documentId)?.chunkIds ?? []) {
        if (w.keep.has(id)) continue;
        operations.push({ delete: { _index: alias, _id: id } });
        owners.push(i);
      }
    });
    const items = await this.store.bulkItems(operations, { refresh: true, requireAlias: true });
    const outcomes: (Error | undefined)[] = writes.map(() => undefined);
    items.forEach((item, k) => {
      if (item.error === undefined || isAlreadyGone(item) || outcomes[owners[k]]) return;
      outcomes[owners[k]] = this.store.errors.itemError("replace document chunks", item.status, item.error);
    });
    if (outcomes.every((outcome) => outcome === undefined)) this.cleanIndices.add(alias);
    return outcomes;
  }

  /** Each document's marker flag and chunk ids in an index, as of the last refresh. */
  private async storedRecords(index: string, documentIds: string[]): Promise<Map<string, { enabled?: boolean; chunkIds: string[] }>> {
    const stored = new Map(documentIds.map((id) => [id, { enabled: undefined as boolean | undefined, chunkIds: [] as string[] }]));
    const filter = (recordType: ChunkSource["record_type"]) => ({ bool: { filter: [{ term: { record_type: recordType } }, { terms: { document_id: documentIds } }] } });
    const chunkPage = (after?: unknown[]) => ({
      size: MAX_DOCUMENT_RECORDS,
      _source: ["document_id"],
      query: filter("chunk"),
      sort: [{ chunk_id: "asc" }],
      ...(after ? { search_after: after } : {}),
    });
    const [markers, firstPage] = await this.store.multiSearch(index, [{ size: documentIds.length, _source: ["document_id", "enabled"], query: filter("document") }, chunkPage()]);
    const searchHits = (item: MultiSearchItem) => {
      if ("error" in item) throw this.store.errors.itemError("replace document chunks", item.status, item.error);
      return item.hits;
    };
    for (const hit of searchHits(markers)) {
      const entry = hit._source && stored.get(hit._source.document_id);
      if (entry) entry.enabled = hit._source!.enabled;
    }
    for (let page = searchHits(firstPage); ; ) {
      for (const hit of page) stored.get(hit._source?.document_id ?? "")?.chunkIds.push(hit._id);
      if (page.length < MAX_DOCUMENT_RECORDS) return stored;
      page = (await this.store.search<ChunkSource>(index, chunkPage(page[page.length - 1].sort))).hits;
    }
  }

  /** The bulk operations writing a document's chunk records, its document vector on the first chunk. */
  private chunkOperations(
    index: string,
    knowledgeBaseId: string,
    documentId: string,
    fileName: string,
    enabled: boolean,
    chunks: EmbeddedChunk[],
    documentVector: Float32Array | undefined,
    quarryStems: boolean,
  ): Record<string, unknown>[] {
    const first = Math.min(...chunks.map((c) => c.index));
    return chunks.flatMap((chunk) => [
      { index: { _index: index, _id: chunk.id } },
      {
        ...toChunkSource(chunk, knowledgeBaseId, documentId, fileName, enabled),
        search_terms: searchTerms(chunk, quarryStems),
        embedding: Array.from(chunk.vector),
        ...(documentVector && chunk.index === first ? { document_embedding: Array.from(documentVector) } : {}),
      },
    ]);
  }

  private requireShadow(knowledgeBaseId: string): { index: string; dimension: number; quarryStems: boolean } {
    const shadow = this.shadows.get(knowledgeBaseId);
    if (!shadow) throw new FailedPreconditionError(`knowledge base ${knowledgeBaseId} has no change of model in progress`);
    return shadow;
  }

  private async deleteShadowIndex(knowledgeBaseId: string): Promise<void> {
    const shadow = this.shadows.get(knowledgeBaseId);
    this.shadows.delete(knowledgeBaseId);
    if (shadow) await this.deleteIndexIfPresent(shadow.index);
  }

  private async deleteIndexIfPresent(index: string): Promise<void> {
    try {
      await this.store.deleteIndices([index]);
    } catch (error) {
      if (!this.store.errors.isIndexNotFound(error) && !this.store.errors.isResponseError(error, 404)) throw error;
    }
  }

  /** Chunk records per document in an index, paged with a composite aggregation (no 10,000 cap). */
  private async chunkCountsByDocument(index: string): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    let after: Record<string, unknown> | undefined;
    for (;;) {
      const result = await this.store.search(index, {
        size: 0,
        query: { term: { record_type: "chunk" } },
        aggs: { documents: { composite: { size: 1000, sources: [{ document_id: { terms: { field: "document_id" } } }], ...(after ? { after } : {}) } } },
      });
      const documents = (result.aggregations as { documents?: { buckets: { key: { document_id: string }; doc_count: number }[]; after_key?: Record<string, unknown> } })?.documents;
      for (const bucket of documents?.buckets ?? []) counts.set(bucket.key.document_id, bucket.doc_count);
      if (!documents?.after_key || documents.buckets.length === 0) return counts;
      after = documents.after_key;
    }
  }

  /**
   * The live index's dimension, read again when the vectors to write have another: a change of
   * model that another index replica ran has swapped the index behind the alias since it was cached.
   */
  private async currentDimension(knowledgeBaseId: string, written: number | undefined): Promise<number> {
    const dimension = await this.requireDimension(knowledgeBaseId);
    if (written === undefined || written === dimension || this.shadows.has(knowledgeBaseId)) return dimension;
    this.dimensions.delete(knowledgeBaseId);
    this.quarryStems.delete(knowledgeBaseId);
    this.documentFieldReady.delete(knowledgeBaseId);
    this.documentVectorsSeen.delete(knowledgeBaseId);
    return this.requireDimension(knowledgeBaseId);
  }

  private async requireDimension(knowledgeBaseId: string): Promise<number> {
    const dimension = await this.readDimension(knowledgeBaseId);
    if (dimension === undefined) throw new NotFoundError(`knowledge base ${knowledgeBaseId} has no search index`);
    return dimension;
  }

  private async documentEnabled(alias: string, documentId: string): Promise<boolean> {
    const marker = await findRecord<{ enabled?: boolean }>(this.store, alias, documentMarkerId(documentId), ["enabled"]);
    return marker?.source.enabled ?? true;
  }

  /** Runs the searches in one round trip; any failed search fails the whole call. */
  private async msearch(index: string, bodies: Record<string, unknown>[], toHit: ((hit: StoredHit<ChunkSource>) => EngineHit)[]): Promise<EngineHit[][]> {
    const responses = await this.store.multiSearch(index, bodies);
    return responses.map((response, i) => {
      if ("error" in response) {
        if (response.error.type === "index_not_found_exception") throw new NotFoundError(`search: index not found (${index})`);
        throw this.store.errors.itemError("search", response.status, response.error);
      }
      return response.hits.map(toHit[i]);
    });
  }
}

/** The chunk's keyword-index text: its heading path and text, segmented, and stemmed where Quarry stems. */
function searchTerms(chunk: Chunk, quarryStems: boolean): string {
  const segmented = segmentForIndex(withHeadingPath(chunk.text, chunk.sectionPath));
  return quarryStems ? stemSegmented(segmented) : segmented;
}

/** Whether a chunk carries what only an index with the edit fields can store. */
function hasEdits(chunk: Chunk): boolean {
  return chunk.revision !== undefined || chunk.disabled === true;
}

function bm25Hit(hit: StoredHit<ChunkSource>): EngineHit {
  return bm25EngineHit(hit._source!, hit._score);
}

function vectorHit(hit: StoredHit<ChunkSource>): EngineHit {
  return vectorEngineHit(hit._source!, hit._score);
}
