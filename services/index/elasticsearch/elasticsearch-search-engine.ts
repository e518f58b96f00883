// The Elasticsearch search engine, shaped like the OpenSearch one: one index per knowledge base
// behind an alias (quarry-chunks-<kb> → quarry-chunks-<kb>-v1), one index template, the chunk
// records of search-documents.ts. BM25 runs over the field pre-segmented by text-segmenter.ts with
// the built-in whitespace analyzer; kNN runs over a dense_vector (HNSW, cosine). Hybrid sends both
// queries in one _msearch and fuses them with rrf-fusion.ts: the distribution Quarry runs (the
// Maven integ-test zip) has no rank-rrf module, so the native `rrf` retriever does not exist there,
// and every hit must explain its rank in each list anyway.
//
// That distribution also lacks the reindex module (_delete_by_query, _update_by_query) and
// lang-painless, so deleting or flagging a document's chunks collects their ids with a scroll and
// writes them with _bulk. Chunk indices do not refresh on a timer: each write refreshes once when it
// is complete, so a document's replacement becomes visible in one step.
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import type { Client } from "@elastic/elasticsearch";
import type { Chunk, EmbeddedChunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import { DEFAULT_RRF_K, fuseHits, type EngineHit } from "../rrf-fusion.ts";
import {
  bm25EngineHit,
  bm25SearchBody,
  CHUNK_SOURCE_EXCLUDES,
  chunkFieldMappings,
  chunkFilters,
  chunksByIdSearchBody,
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
import { bulkWrite, matchingIds } from "./elasticsearch-bulk.ts";
import { errorType, isIndexNotFound, isResponseError, itemError, toDomainError } from "./elasticsearch-errors.ts";

export interface ElasticsearchSearchEngineOptions {
  /** Alias and index names start with this; tests use their own prefix and delete it afterwards. */
  indexPrefix?: string;
  shards?: number;
  replicas?: number;
  /** Close the client on close(); false when the catalog shares it. */
  ownsClient?: boolean;
}

interface RawHit {
  _id: string;
  _score?: number | null;
  _source?: ChunkSource;
}

// Elasticsearch refuses a kNN k or num_candidates above this.
const MAX_KNN_CANDIDATES = 10_000;

export class ElasticsearchSearchEngine implements SearchEngine {
  private readonly prefix: string;
  private readonly dimensions = new Map<string, number>();
  private templateReady: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly options: ElasticsearchSearchEngineOptions = {},
  ) {
    this.prefix = options.indexPrefix ?? "quarry-chunks-";
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(this.prefix)) throw new InvalidInputError(`index prefix ${this.prefix} is not a valid Elasticsearch index name start`);
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
            aliases: { [this.aliasFor(knowledgeBaseId)]: {} },
            mappings: {
              _meta: { knowledge_base_id: knowledgeBaseId, dimension: embeddingDimension },
              properties: {
                // Plain float HNSW, not the int8 quantization 8.x picks by default: scores stay the
                // exact cosine the other engines report, at 4 bytes per dimension.
                embedding: { type: "dense_vector", dims: embeddingDimension, index: true, similarity: "cosine", index_options: { type: "hnsw" } },
              },
            },
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
        const aliases = await this.client.indices.getAlias({ name: this.aliasFor(knowledgeBaseId) });
        const indices = Object.keys(aliases);
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
      await bulkWrite(this.client, "replace document chunks", operations, { refresh: false, requireAlias: true });
      // The scroll sees the last refresh: the old set, of which the ids not rewritten above are stale.
      const stale = (await matchingIds(this.client, alias, documentChunksQuery(documentId))).filter((id) => !seen.has(id));
      await bulkWrite(this.client, "replace document chunks", stale.map((id) => ({ delete: { _index: alias, _id: id } })), { refresh: false, requireAlias: true });
      await this.client.indices.refresh({ index: alias });
    });
  }

  async deleteDocument(knowledgeBaseId: string, documentId: string): Promise<void> {
    await this.call("delete document", async () => {
      const alias = this.aliasFor(knowledgeBaseId);
      let ids: string[];
      try {
        ids = await matchingIds(this.client, alias, documentRecordsQuery(documentId));
      } catch (error) {
        // Nothing stored for that knowledge base: nothing to delete.
        if (isIndexNotFound(error)) return;
        throw error;
      }
      // The marker is deleted too, even if it was written after the last refresh.
      const all = new Set([...ids, documentMarkerId(documentId)]);
      await bulkWrite(this.client, "delete document", [...all].map((id) => ({ delete: { _index: alias, _id: id } })), { refresh: true, requireAlias: true });
    });
  }

  async setDocumentEnabled(knowledgeBaseId: string, documentId: string, enabled: boolean): Promise<void> {
    await this.call("set document enabled", async () => {
      await this.requireDimension(knowledgeBaseId);
      const alias = this.aliasFor(knowledgeBaseId);
      const ids = await matchingIds(this.client, alias, documentChunksQuery(documentId));
      await bulkWrite(this.client, "set document enabled", [
        { index: { _index: alias, _id: documentMarkerId(documentId) } },
        documentMarkerSource(knowledgeBaseId, documentId, enabled),
        ...ids.flatMap((id) => [{ update: { _index: alias, _id: id } }, { doc: { enabled } }]),
      ], { refresh: true, requireAlias: true });
    });
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    validateSearchQuery(query);
    return this.call("search", async () => {
      const dimensions = await Promise.all(
        query.knowledgeBaseIds.map(async (knowledgeBaseId) => ({ knowledgeBaseId, dimension: await this.requireDimension(knowledgeBaseId) })),
      );
      const index = query.knowledgeBaseIds.map((id) => this.aliasFor(id)).join(",");
      const k = query.rrfK ?? DEFAULT_RRF_K;
      const terms = segmentQuery(query.text);
      if (query.mode === "bm25") {
        const [hits] = terms.length > 0 ? await this.msearch(index, [bm25SearchBody(query, terms, query.topK)], [bm25Hit]) : [[]];
        return applyMinScore(fuseHits([{ name: "bm25", hits }], { k, scoreFrom: "bm25" }), query.minScore);
      }
      const vector = requireQueryVector(query, dimensions);
      if (query.mode === "vector") {
        const [hits] = await this.msearch(index, [knnBody(query, vector, query.topK)], [vectorHit]);
        return applyMinScore(fuseHits([{ name: "vector", hits }], { k, scoreFrom: "vector" }), query.minScore);
      }
      const candidates = hybridCandidates(query);
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
      const response = await this.client.search<ChunkSource>({
        index: `${this.prefix}*`,
        ignore_unavailable: true,
        allow_no_indices: true,
        ...(chunksByIdSearchBody(unique) as object),
      });
      const byId = new Map<string, Chunk>();
      for (const hit of response.hits.hits) if (hit._source) byId.set(hit._id!, bm25Hit(hit as RawHit).chunk);
      return ids.flatMap((id) => byId.get(id) ?? []);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.options.ownsClient) await this.client.close();
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
        index_patterns: [`${this.prefix}*`],
        template: {
          settings: {
            number_of_shards: this.options.shards ?? 1,
            number_of_replicas: this.options.replicas ?? 0,
            refresh_interval: "-1",
          },
          // `whitespace` is the one whitespace-splitting analyzer built into the server; the
          // tokenizer of the same name lives in the analysis-common module this distribution lacks,
          // and so do porter_stem, stemmer and kstem: unlike SQLite and OpenSearch, this backend
          // does not stem English terms (the text is already lower-cased by text-segmenter.ts).
          mappings: { dynamic: "strict", _meta: {}, properties: chunkFieldMappings("whitespace") as never },
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
      const mappings = await this.client.indices.getMapping({ index: this.aliasFor(knowledgeBaseId) });
      const dimension = Object.values(mappings)[0]?.mappings?._meta?.dimension;
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
      const response = await this.client.get<{ enabled?: boolean }>({ index: alias, id: documentMarkerId(documentId), _source_includes: ["enabled"] });
      return response._source?.enabled ?? true;
    } catch (error) {
      if (isResponseError(error, 404) && errorType(error) !== "index_not_found_exception") return true;
      throw error;
    }
  }

  /** Runs the searches in one round trip; any failed search fails the whole call. */
  private async msearch(index: string, bodies: Record<string, unknown>[], toHit: ((hit: RawHit) => EngineHit)[]): Promise<EngineHit[][]> {
    const response = await this.client.msearch<ChunkSource>({ searches: bodies.flatMap((search) => [{ index }, search]) as never });
    return response.responses.map((item, i) => {
      if ("error" in item) {
        if (item.error.type === "index_not_found_exception") throw new NotFoundError(`search: index not found (${index})`);
        throw itemError("search", item.status, item.error);
      }
      return item.hits.hits.map((hit) => toHit[i](hit as RawHit));
    });
  }
}

function bm25Hit(hit: RawHit): EngineHit {
  return bm25EngineHit(hit._source!, hit._score);
}

function vectorHit(hit: RawHit): EngineHit {
  return vectorEngineHit(hit._source!, hit._score);
}

function knnBody(query: SearchQuery, vector: Float32Array, size: number): Record<string, unknown> {
  const k = Math.min(size, MAX_KNN_CANDIDATES);
  return {
    size: k,
    _source: { excludes: CHUNK_SOURCE_EXCLUDES },
    // The filter inside knn applies during the graph search, so it never starves the top k the way
    // a post-filter would. Twice k candidates (at least 100) keeps HNSW recall high on small k.
    query: {
      knn: {
        field: "embedding",
        query_vector: Array.from(vector),
        k,
        num_candidates: Math.min(Math.max(2 * k, 100), MAX_KNN_CANDIDATES),
        filter: { bool: { filter: chunkFilters(query) } },
      },
    },
    sort: SCORE_THEN_CHUNK_ID,
    track_scores: true,
  };
}
