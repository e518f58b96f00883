// The distributed search engine: one OpenSearch index per knowledge base behind an alias
// (quarry-chunks-<kb> → quarry-chunks-<kb>-v1, so a re-index can swap indices), shaped by one index
// template, holding the chunk records of search-documents.ts. BM25 runs over a field pre-segmented
// by text-segmenter.ts with a whitespace + Porter-stemming analyzer, so it matches exactly the terms
// the embedded engine (FTS5 porter tokenizer) matches; kNN uses Lucene HNSW with cosine.
// Hybrid runs natively (a `hybrid` query through a neural-search pipeline, opensearch-native-hybrid.ts)
// when the engine is given nativeHybrid and the search fits what 2.19's pipelines compute; otherwise
// it sends both queries in one _msearch and fuses them with rrf-fusion.ts, like the embedded engine.
// Either way every hit explains its rank and score in each list.
//
// Chunk indices do not refresh on a timer: each write refreshes once when it is complete, so a
// document's replacement (upsert the new chunks, delete the stale ones) becomes visible in one step.
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import type { Client } from "@opensearch-project/opensearch";
import type { Chunk, EmbeddedChunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import type { HybridFusion } from "../config.ts";
import { DEFAULT_RRF_K, fuseHits, type EngineHit } from "../rrf-fusion.ts";
import {
  bm25BoolQuery,
  bm25EngineHit,
  bm25SearchBody,
  CHUNK_SOURCE_EXCLUDES,
  chunkFieldMappings,
  chunkFilters,
  chunkFromSource,
  chunksByIdSearchBody,
  cosineFromLuceneScore,
  documentChunksQuery,
  documentMarkerId,
  documentMarkerSource,
  documentRecordsQuery,
  indexSlug,
  SCORE_THEN_CHUNK_ID,
  toChunkSource,
  vectorEngineHit,
  type ChunkSource,
} from "../search-documents.ts";
import type { SearchEngine } from "../search-engine.ts";
import { applyMinScore, hybridCandidates, requireQueryVector, validateSearchQuery } from "../search-query.ts";
import { segmentForIndex, segmentQuery } from "../text-segmenter.ts";
import { errorType, isIndexNotFound, isResponseError, itemError, toDomainError } from "./opensearch-errors.ts";
import {
  BM25_QUERY_NAME,
  explainNativeHits,
  isNativeRankConstant,
  SearchPipelines,
  VECTOR_QUERY_NAME,
  type NativeHit,
} from "./opensearch-native-hybrid.ts";

export interface OpenSearchSearchEngineOptions {
  /** Alias and index names start with this; tests use their own prefix and delete it afterwards. */
  indexPrefix?: string;
  shards?: number;
  replicas?: number;
  /** Close the client on close(); false when the catalog shares it. */
  ownsClient?: boolean;
  /**
   * Use OpenSearch's hybrid query (the neural-search plugin must be on every node; open-stores.ts
   * checks). Absent: hybrid always runs as one _msearch fused by rrf-fusion.ts.
   */
  nativeHybrid?: {
    /** Fusion when a search does not choose one; "normalized" exists only natively. Default "rrf". */
    fusion?: HybridFusion;
    /** Search pipeline names start with this (default "quarry-"); tests use their own and delete it. */
    pipelinePrefix?: string;
  };
}

export interface SearchOptions {
  /** Overrides the engine's fusion for this hybrid search. */
  fusion?: HybridFusion;
}

interface SearchResponseBody {
  hits: { hits: { _id: string; _index: string; _score: number | null; _source?: ChunkSource; matched_queries?: Record<string, number> }[] };
}

// Lucene refuses a kNN k above this; index.max_result_window (the most hits one search returns) defaults to the same.
const MAX_KNN_K = 10_000;
const MAX_RESULT_WINDOW = 10_000;

export class OpenSearchSearchEngine implements SearchEngine {
  private readonly prefix: string;
  private readonly dimensions = new Map<string, number>();
  private readonly pipelines: SearchPipelines | undefined;
  private templateReady: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly options: OpenSearchSearchEngineOptions = {},
  ) {
    this.prefix = options.indexPrefix ?? "quarry-chunks-";
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(this.prefix)) throw new InvalidInputError(`index prefix ${this.prefix} is not a valid OpenSearch index name start`);
    if (options.nativeHybrid) this.pipelines = new SearchPipelines(client, options.nativeHybrid.pipelinePrefix ?? "quarry-");
  }

  /** Whether hybrid searches may run natively. */
  get usesNativeHybrid(): boolean {
    return this.pipelines !== undefined;
  }

  /**
   * Creates the search pipeline of the default fusion (RRF k = 60, or min-max with equal weights) so a
   * misconfigured cluster fails at start-up; pipelines for other constants and weights follow on first use.
   */
  async prepare(): Promise<void> {
    if (!this.pipelines) return;
    const pipelines = this.pipelines;
    await this.call("prepare search pipelines", async () => {
      if (this.defaultFusion === "rrf") await pipelines.rrf(DEFAULT_RRF_K);
      else await pipelines.normalized({ bm25: 1, vector: 1 });
    });
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
          await this.client.indices.create({
            index: `${this.aliasFor(knowledgeBaseId)}-v1`,
            body: {
              aliases: { [this.aliasFor(knowledgeBaseId)]: {} },
              mappings: {
                _meta: { knowledge_base_id: knowledgeBaseId, dimension: embeddingDimension },
                properties: {
                  embedding: {
                    type: "knn_vector",
                    dimension: embeddingDimension,
                    method: { name: "hnsw", engine: "lucene", space_type: "cosinesimil" },
                  },
                },
              },
            } as Record<string, unknown>,
          });
          this.dimensions.set(knowledgeBaseId, embeddingDimension);
          return;
        } catch (error) {
          // Another process created it first: fall through and compare dimensions.
          if (errorType(error) !== "resource_already_exists_exception") throw error;
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
        const { body } = await this.client.indices.getAlias({ name: this.aliasFor(knowledgeBaseId) });
        const indices = Object.keys(body as Record<string, unknown>);
        if (indices.length > 0) await this.client.indices.delete({ index: indices.join(",") });
      } catch (error) {
        if (!isResponseError(error, 404)) throw error;
      }
    });
  }

  async replaceDocumentChunks(knowledgeBaseId: string, documentId: string, fileName: string, chunks: EmbeddedChunk[]): Promise<void> {
    const seen = new Set<string>();
    for (const chunk of chunks) {
      if (!chunk.id) throw new InvalidInputError("every chunk needs an id");
      if (seen.has(chunk.id)) throw new InvalidInputError(`chunk id ${chunk.id} appears twice`);
      seen.add(chunk.id);
    }
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
      await this.bulk(operations);
      // Readers still see the last refresh: the old set, until the refresh below shows the new one.
      await this.client.deleteByQuery({
        index: alias,
        conflicts: "proceed",
        refresh: false,
        body: { query: documentChunksQuery(documentId, [...seen]) },
      });
      await this.client.indices.refresh({ index: alias });
    });
  }

  async deleteDocument(knowledgeBaseId: string, documentId: string): Promise<void> {
    await this.call("delete document", async () => {
      try {
        await this.client.deleteByQuery({
          index: this.aliasFor(knowledgeBaseId),
          conflicts: "proceed",
          refresh: true,
          body: { query: documentRecordsQuery(documentId) },
        });
      } catch (error) {
        // Nothing stored for that knowledge base: nothing to delete.
        if (!isIndexNotFound(error)) throw error;
      }
    });
  }

  async setDocumentEnabled(knowledgeBaseId: string, documentId: string, enabled: boolean): Promise<void> {
    await this.call("set document enabled", async () => {
      await this.requireDimension(knowledgeBaseId);
      const alias = this.aliasFor(knowledgeBaseId);
      await this.client.index({
        index: alias,
        id: documentMarkerId(documentId),
        require_alias: true,
        body: documentMarkerSource(knowledgeBaseId, documentId, enabled),
      });
      await this.client.updateByQuery({
        index: alias,
        conflicts: "proceed",
        refresh: true,
        body: {
          query: documentChunksQuery(documentId),
          script: { source: "ctx._source.enabled = params.enabled", lang: "painless", params: { enabled } },
        },
      });
    });
  }

  async search(query: SearchQuery, options: SearchOptions = {}): Promise<SearchHit[]> {
    validateSearchQuery(query);
    const fusion = options.fusion ?? this.defaultFusion;
    if (query.mode === "hybrid" && fusion === "normalized" && !this.pipelines) {
      throw new FailedPreconditionError("normalized fusion needs OpenSearch's native hybrid query, which this engine does not use");
    }
    return this.call("search", async () => {
      const dimensions = await Promise.all(
        query.knowledgeBaseIds.map(async (knowledgeBaseId) => ({ knowledgeBaseId, dimension: await this.requireDimension(knowledgeBaseId) })),
      );
      const index = query.knowledgeBaseIds.map((id) => this.aliasFor(id)).join(",");
      const k = query.rrfK ?? DEFAULT_RRF_K;
      if (query.mode === "bm25") {
        const hits = await this.bm25Hits(index, query, query.topK);
        return applyMinScore(fuseHits([{ name: "bm25", hits }], { k, scoreFrom: "bm25" }), query.minScore);
      }
      const vector = requireQueryVector(query, dimensions);
      if (query.mode === "vector") {
        const [hits] = await this.msearch(index, [knnBody(query, vector, query.topK)], [vectorHit]);
        return applyMinScore(fuseHits([{ name: "vector", hits }], { k, scoreFrom: "vector" }), query.minScore);
      }
      const candidates = hybridCandidates(query);
      const terms = segmentQuery(query.text);
      if (fusion === "normalized" || this.nativeRrfFits(query, k)) {
        return applyMinScore(await this.nativeHybrid(index, query, terms, vector, candidates, fusion), query.minScore).slice(0, query.topK);
      }
      const [bm25, knn] =
        terms.length > 0
          ? await this.msearch(index, [bm25SearchBody(query, terms, candidates), knnBody(query, vector, candidates)], [bm25Hit, vectorHit])
          : [[], ...(await this.msearch(index, [knnBody(query, vector, candidates)], [vectorHit]))];
      const fused = fuseHits(
        [
          { name: "bm25", hits: bm25, weight: query.weights?.bm25 },
          { name: "vector", hits: knn, weight: query.weights?.vector },
        ],
        { k },
      );
      return applyMinScore(fused, query.minScore).slice(0, query.topK);
    });
  }

  async getChunks(ids: string[]): Promise<Chunk[]> {
    if (ids.length === 0) return [];
    return this.call("get chunks", async () => {
      const unique = [...new Set(ids)];
      const { body } = await this.client.search({
        index: `${this.prefix}*`,
        ignore_unavailable: true,
        allow_no_indices: true,
        body: chunksByIdSearchBody(unique),
      });
      const byId = new Map<string, Chunk>();
      for (const hit of (body as unknown as SearchResponseBody).hits.hits) if (hit._source) byId.set(hit._id, chunkFromSource(hit._source));
      return ids.flatMap((id) => byId.get(id) ?? []);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.options.ownsClient) await this.client.close();
  }

  private get defaultFusion(): HybridFusion {
    return this.options.nativeHybrid?.fusion ?? "rrf";
  }

  // 2.19's RRF pipeline ranks each shard on its own and has no weights, so it is the same fusion as
  // rrf-fusion.ts only for one shard and equal weights; anything else takes the _msearch path.
  private nativeRrfFits(query: SearchQuery, k: number): boolean {
    const bm25 = query.weights?.bm25 ?? 1;
    const vector = query.weights?.vector ?? 1;
    return (
      this.pipelines !== undefined &&
      new Set(query.knowledgeBaseIds).size === 1 &&
      (this.options.shards ?? 1) === 1 &&
      isNativeRankConstant(k) &&
      bm25 === vector &&
      bm25 > 0
    );
  }

  private async nativeHybrid(
    index: string,
    query: SearchQuery,
    terms: string[],
    vector: Float32Array,
    candidates: number,
    fusion: HybridFusion,
  ): Promise<SearchHit[]> {
    const pipelines = this.pipelines!;
    const rrfK = query.rrfK ?? DEFAULT_RRF_K;
    const weights = { bm25: query.weights?.bm25 ?? 1, vector: query.weights?.vector ?? 1 };
    const pipeline = fusion === "rrf" ? await pipelines.rrf(rrfK) : await pipelines.normalized(weights);
    const depth = Math.min(candidates, MAX_KNN_K);
    const shards = new Set(query.knowledgeBaseIds).size * (this.options.shards ?? 1);
    // The whole union of both lists, so every list member is there to rank (see opensearch-native-hybrid.ts).
    const size = Math.min(2 * depth * shards, MAX_RESULT_WINDOW);
    const { body } = await this.client.search({
      index,
      search_pipeline: pipeline,
      include_named_queries_score: true,
      body: {
        size,
        _source: { excludes: CHUNK_SOURCE_EXCLUDES },
        query: {
          hybrid: {
            pagination_depth: depth,
            queries: [
              // A query without searchable words still needs its BM25 clause: the pipeline's weights are per clause.
              terms.length > 0 ? { bool: { ...bm25BoolQuery(query, terms), _name: BM25_QUERY_NAME } } : { match_none: { _name: BM25_QUERY_NAME } },
              { knn: { embedding: { ...knnClause(query, vector, depth), _name: VECTOR_QUERY_NAME } } },
            ],
          },
        },
      } as Record<string, unknown>,
    });
    const raw = (body as unknown as SearchResponseBody).hits.hits;
    const sources = new Map(raw.map((hit) => [hit._id, hit._source!]));
    const native: NativeHit[] = raw.map((hit) => {
      const named = hit.matched_queries ?? {};
      const knn = named[VECTOR_QUERY_NAME];
      return {
        id: hit._id,
        index: hit._index,
        score: hit._score ?? 0,
        bm25: named[BM25_QUERY_NAME],
        vector: knn === undefined ? undefined : cosineFromLuceneScore(knn),
      };
    });
    return explainNativeHits(native, { fusion, depth, rrfK, weights }).map(({ id, score, explain }) => {
      const source = sources.get(id)!;
      return { chunk: chunkFromSource(source), fileName: source.file_name, score, explain };
    });
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new UnavailableError(`${what}: the search engine is closed`);
    try {
      return await fn();
    } catch (error) {
      throw toDomainError(error, what);
    }
  }

  private ensureTemplate(): Promise<void> {
    this.templateReady ??= this.client.indices
      .putIndexTemplate({
        name: `${this.prefix}template`,
        body: {
          index_patterns: [`${this.prefix}*`],
          template: {
            settings: {
              "index.knn": true,
              number_of_shards: this.options.shards ?? 1,
              number_of_replicas: this.options.replicas ?? 0,
              refresh_interval: "-1",
              // The text arrives segmented (text-segmenter.ts), so splitting on whitespace is all the
              // tokenizing left; porter_stem (analysis-common) then stems English terms like SQLite's
              // FTS5 porter tokenizer, and match queries on the field go through the same analyzer.
              analysis: {
                analyzer: { quarry_terms: { type: "custom", tokenizer: "whitespace", filter: ["lowercase", "porter_stem"] } },
              },
            },
            mappings: { dynamic: "strict", _meta: {}, properties: chunkFieldMappings("quarry_terms") },
          },
        } as Record<string, unknown>,
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
      const { body } = await this.client.indices.getMapping({ index: this.aliasFor(knowledgeBaseId) });
      const mappings = Object.values(body as Record<string, { mappings?: { _meta?: { dimension?: number } } }>);
      const dimension = mappings[0]?.mappings?._meta?.dimension;
      if (typeof dimension !== "number") return undefined;
      this.dimensions.set(knowledgeBaseId, dimension);
      return dimension;
    } catch (error) {
      if (isIndexNotFound(error)) return undefined;
      throw error;
    }
  }

  private async requireDimension(knowledgeBaseId: string): Promise<number> {
    const dimension = await this.readDimension(knowledgeBaseId);
    if (dimension === undefined) throw new NotFoundError(`knowledge base ${knowledgeBaseId} has no search index`);
    return dimension;
  }

  private async documentEnabled(alias: string, documentId: string): Promise<boolean> {
    try {
      const { body } = await this.client.get({ index: alias, id: documentMarkerId(documentId), _source_includes: ["enabled"] });
      const source = (body as { _source?: { enabled?: boolean } })._source;
      return source?.enabled ?? true;
    } catch (error) {
      if (isResponseError(error, 404) && errorType(error) !== "index_not_found_exception") return true;
      throw error;
    }
  }

  private async bulk(operations: Record<string, unknown>[]): Promise<void> {
    const { body } = await this.client.bulk({ body: operations, require_alias: true, refresh: false });
    const result = body as { errors: boolean; items: Record<string, { status: number; error?: unknown }>[] };
    if (!result.errors) return;
    const failed = result.items.map((item) => Object.values(item)[0]).find((item) => item.error);
    throw itemError("bulk write", failed?.status, failed?.error);
  }

  private async bm25Hits(index: string, query: SearchQuery, size: number): Promise<EngineHit[]> {
    const terms = segmentQuery(query.text);
    if (terms.length === 0) return [];
    const [hits] = await this.msearch(index, [bm25SearchBody(query, terms, size)], [bm25Hit]);
    return hits;
  }

  /** Runs the searches in one round trip; any failed search fails the whole call. */
  private async msearch(index: string, bodies: Record<string, unknown>[], toHit: ((hit: RawHit) => EngineHit)[]): Promise<EngineHit[][]> {
    const { body } = await this.client.msearch({ body: bodies.flatMap((search) => [{ index }, search]) as never });
    const responses = (body as unknown as { responses: (SearchResponseBody & { error?: unknown; status?: number })[] }).responses;
    return responses.map((response, i) => {
      if (response.error) {
        const type = (response.error as { type?: string }).type;
        if (type === "index_not_found_exception") throw new NotFoundError(`search: index not found (${index})`);
        throw itemError("search", response.status, response.error);
      }
      return response.hits.hits.map(toHit[i]);
    });
  }
}

type RawHit = SearchResponseBody["hits"]["hits"][number];

function bm25Hit(hit: RawHit): EngineHit {
  return bm25EngineHit(hit._source!, hit._score);
}

function vectorHit(hit: RawHit): EngineHit {
  return vectorEngineHit(hit._source!, hit._score);
}

// A filter inside knn is applied during the graph search (Lucene efficient filtering), so it never
// starves the top k the way a post-filter would.
function knnClause(query: SearchQuery, vector: Float32Array, k: number): Record<string, unknown> {
  return { vector: Array.from(vector), k, filter: { bool: { filter: chunkFilters(query) } } };
}

function knnBody(query: SearchQuery, vector: Float32Array, size: number): Record<string, unknown> {
  const k = Math.min(size, MAX_KNN_K);
  return {
    size: k,
    _source: { excludes: CHUNK_SOURCE_EXCLUDES },
    query: { knn: { embedding: knnClause(query, vector, k) } },
    sort: SCORE_THEN_CHUNK_ID,
    track_scores: true,
  };
}
