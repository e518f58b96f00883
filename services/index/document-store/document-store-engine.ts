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
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import type { Chunk, EmbeddedChunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import { findRecord, type DocumentStorePort, type StoredHit } from "./document-store-port.ts";
import { DEFAULT_RRF_K, type EngineHit } from "../search/rrf-fusion.ts";
import { hybridSearch } from "../search/hybrid-search.ts";
import {
  bm25EngineHit,
  bm25SearchBody,
  chunkFieldMappings,
  chunkFromSource,
  chunksByIdSearchBody,
  documentChunksQuery,
  documentMarkerId,
  documentMarkerSource,
  documentRecordsQuery,
  indexSlug,
  toChunkSource,
  vectorEngineHit,
  type ChunkSource,
} from "./search-documents.ts";
import type { SearchEngine } from "../search-engine.ts";
import { uniqueChunkIds } from "../search/search-query.ts";
import { segmentForIndex, segmentQuery } from "../search/text-segmenter.ts";

export interface DocumentStoreEngineOptions {
  /** Alias and index names start with this; tests use their own prefix and delete it afterwards. */
  indexPrefix?: string;
  shards?: number;
  replicas?: number;
  /** Close the client on close(); false when the catalog shares it. */
  ownsClient?: boolean;
}

/** What the engines' chunk indices differ in. */
export interface ChunkIndexDialect {
  /** Template settings beyond shards, replicas and refresh interval (e.g. analysis). */
  templateSettings: Record<string, unknown>;
  /** The analyzer of the pre-segmented search_terms field (must split on whitespace only). */
  searchTermsAnalyzer: string;
  vectorMapping(dimension: number): Record<string, unknown>;
  /** The top-size kNN request, filtered by the query's chunk filters. */
  knnBody(query: SearchQuery, vector: Float32Array, size: number): Record<string, unknown>;
}

/** A hybrid search's inputs, for a backend that can answer it natively. */
export interface HybridSearch {
  index: string;
  query: SearchQuery;
  terms: string[];
  vector: Float32Array;
  candidates: number;
  k: number;
}

export class DocumentStoreEngine implements SearchEngine {
  protected readonly prefix: string;
  private readonly dimensions = new Map<string, number>();
  private templateReady: Promise<void> | undefined;
  private closed = false;

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
      await this.ensureTemplate();
      const existing = await this.readDimension(knowledgeBaseId);
      if (existing === undefined) {
        try {
          await this.store.createIndex(`${this.aliasFor(knowledgeBaseId)}-v1`, {
            aliases: { [this.aliasFor(knowledgeBaseId)]: {} },
            mappings: {
              _meta: { knowledge_base_id: knowledgeBaseId, dimension: embeddingDimension },
              properties: { embedding: this.dialect.vectorMapping(embeddingDimension) },
            },
          });
          this.dimensions.set(knowledgeBaseId, embeddingDimension);
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
      try {
        const indices = await this.store.aliasIndices(this.aliasFor(knowledgeBaseId));
        if (indices.length > 0) await this.store.deleteIndices(indices);
      } catch (error) {
        if (!this.store.errors.isResponseError(error, 404)) throw error;
      }
    });
  }

  async replaceDocumentChunks(knowledgeBaseId: string, documentId: string, fileName: string, chunks: EmbeddedChunk[]): Promise<void> {
    const seen = uniqueChunkIds(chunks);
    await this.call("replace document chunks", async () => {
      const dimension = await this.requireDimension(knowledgeBaseId);
      for (const chunk of chunks) {
        if (chunk.vector.length !== dimension) {
          throw new FailedPreconditionError(
            `chunk ${chunk.id} has a ${chunk.vector.length}-dimensional vector; knowledge base ${knowledgeBaseId} stores ${dimension}`,
          );
        }
      }
      const alias = this.aliasFor(knowledgeBaseId);
      const enabled = await this.documentEnabled(alias, documentId);
      const operations: Record<string, unknown>[] = [
        { index: { _index: alias, _id: documentMarkerId(documentId) } },
        documentMarkerSource(knowledgeBaseId, documentId, enabled, fileName),
      ];
      for (const chunk of chunks) {
        operations.push({ index: { _index: alias, _id: chunk.id } });
        operations.push({ ...toChunkSource(chunk, knowledgeBaseId, documentId, fileName, enabled), search_terms: segmentForIndex(withHeadingPath(chunk.text, chunk.sectionPath)), embedding: Array.from(chunk.vector) });
      }
      await this.store.bulk("replace document chunks", operations, { refresh: false, requireAlias: true });
      // Readers still see the last refresh: the old set, until the refresh below shows the new one.
      await this.store.deleteWhere("replace document chunks", alias, documentChunksQuery(documentId, [...seen]), { refresh: false, requireAlias: true });
      await this.store.refresh(alias);
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
      await this.store.updateWhere("set document enabled", alias, documentChunksQuery(documentId), { enabled }, { refresh: true, requireAlias: true });
    });
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    return this.searchChunks(query);
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.options.ownsClient) await this.store.close();
  }

  /**
   * The search, with hybridOverride answering a hybrid search natively when it returns hits (before
   * min-score and top-k); undefined fuses the _msearch lists.
   */
  protected searchChunks(query: SearchQuery, hybridOverride?: (search: HybridSearch) => Promise<SearchHit[]> | undefined): Promise<SearchHit[]> {
    const index = query.knowledgeBaseIds.map((id) => this.aliasFor(id)).join(",");
    const terms = segmentQuery(query.text);
    return hybridSearch(query, {
      dimensions: (knowledgeBaseIds) =>
        this.call("search", () =>
          Promise.all(knowledgeBaseIds.map(async (knowledgeBaseId) => ({ knowledgeBaseId, dimension: await this.requireDimension(knowledgeBaseId) }))),
        ),
      // Both lists in one _msearch round trip; a query without searchable words sends no BM25 search.
      lists: (request) =>
        this.call("search", async () => {
          const searches: { name: "bm25" | "vector"; body: Record<string, unknown>; toHit: (hit: StoredHit<ChunkSource>) => EngineHit }[] = [];
          if (request.bm25 && terms.length > 0) searches.push({ name: "bm25", body: bm25SearchBody(query, terms, request.bm25.limit), toHit: bm25Hit });
          if (request.vector) searches.push({ name: "vector", body: this.dialect.knnBody(query, request.vector.vector, request.vector.limit), toHit: vectorHit });
          if (searches.length === 0) return {};
          const results = await this.msearch(index, searches.map((search) => search.body), searches.map((search) => search.toHit));
          return Object.fromEntries(searches.map((search, i) => [search.name, results[i]]));
        }),
      fuseNatively: hybridOverride
        ? (request) => {
            const native = hybridOverride({ index, query, terms, vector: request.vector.vector, candidates: request.vector.limit, k: query.rrfK ?? DEFAULT_RRF_K });
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

  private ensureTemplate(): Promise<void> {
    this.templateReady ??= this.store
      .putIndexTemplate(`${this.prefix}template`, {
        index_patterns: [`${this.prefix}*`],
        template: {
          settings: {
            ...this.dialect.templateSettings,
            number_of_shards: this.options.shards ?? 1,
            number_of_replicas: this.options.replicas ?? 0,
            refresh_interval: "-1",
          },
          mappings: { dynamic: "strict", _meta: {}, properties: chunkFieldMappings(this.dialect.searchTermsAnalyzer) },
        },
      })
      .then(
        () => undefined,
        (error: unknown) => {
          this.templateReady = undefined;
          throw error;
        },
      );
    return this.templateReady;
  }

  private async readDimension(knowledgeBaseId: string): Promise<number | undefined> {
    const cached = this.dimensions.get(knowledgeBaseId);
    if (cached !== undefined) return cached;
    try {
      const dimension = (await this.store.mappingMeta(this.aliasFor(knowledgeBaseId)))?.dimension;
      if (typeof dimension !== "number") return undefined;
      this.dimensions.set(knowledgeBaseId, dimension);
      return dimension;
    } catch (error) {
      if (this.store.errors.isIndexNotFound(error)) return undefined;
      throw error;
    }
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

function bm25Hit(hit: StoredHit<ChunkSource>): EngineHit {
  return bm25EngineHit(hit._source!, hit._score);
}

function vectorHit(hit: StoredHit<ChunkSource>): EngineHit {
  return vectorEngineHit(hit._source!, hit._score);
}
