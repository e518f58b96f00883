// The distributed search engine on OpenSearch: the shared steps of document-store-engine.ts over the
// OpenSearch client (opensearch-document-store.ts). BM25 runs over a field pre-segmented by
// text-segmenter.ts with a whitespace + Porter-stemming analyzer, so it matches exactly the terms
// the embedded engine (FTS5 porter tokenizer) matches; kNN uses Lucene HNSW with cosine.
// Hybrid runs natively (a `hybrid` query through a neural-search pipeline, opensearch-native-hybrid.ts)
// when the engine is given nativeHybrid and the search fits what 2.19's pipelines compute; otherwise
// it sends both queries in one _msearch and fuses them in search/hybrid-search.ts, like the embedded engine.
// Either way every hit explains its rank and score in each list.
import type { Client } from "@opensearch-project/opensearch";
import type { SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError } from "../../../lib/errors.ts";
import type { HybridFusion } from "../config.ts";
import type { StoredHit } from "../document-store/document-store-port.ts";
import { DocumentStoreEngine, ENGINE_PORTER_ANALYSIS, type ChunkIndexDialect, type DocumentStoreEngineOptions, type HybridSearch } from "../document-store/document-store-engine.ts";
import { DEFAULT_RRF_K } from "../search/rrf-fusion.ts";
import type { SearchCallOptions } from "../search/search-engine.ts";
import {
  bm25BoolQuery,
  CHUNK_SOURCE_EXCLUDES,
  chunkFilters,
  chunkFromSource,
  cosineFromLuceneScore,
  SCORE_THEN_CHUNK_ID,
  type ChunkSource,
  type VectorField,
} from "../document-store/search-documents.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";
import {
  BM25_QUERY_NAME,
  explainNativeHits,
  isNativeRankConstant,
  SearchPipelines,
  VECTOR_QUERY_NAME,
  type NativeHit,
} from "./opensearch-native-hybrid.ts";

export interface OpenSearchSearchEngineOptions extends DocumentStoreEngineOptions {
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

export interface SearchOptions extends SearchCallOptions {
  /** Overrides the engine's fusion for this hybrid search. */
  fusion?: HybridFusion;
}

// Lucene refuses a kNN k above this; index.max_result_window (the most hits one search returns) defaults to the same.
const MAX_KNN_K = 10_000;
/** The fewest kNN candidates asked of the graph search, whatever the hits wanted (see knnBody). */
const MIN_KNN_CANDIDATES = 100;
const MAX_RESULT_WINDOW = 10_000;

const OPENSEARCH_CHUNKS: ChunkIndexDialect = {
  templateSettings: { "index.knn": true },
  // engines.sh assembles analysis-common into every node Quarry runs, so the engine stems.
  termsAnalysis: () => Promise.resolve(ENGINE_PORTER_ANALYSIS),
  vectorMapping: (dimension) => ({ type: "knn_vector", dimension, method: { name: "hnsw", engine: "lucene", space_type: "cosinesimil" } }),
  knnBody,
};

export class OpenSearchSearchEngine extends DocumentStoreEngine {
  protected declare readonly options: OpenSearchSearchEngineOptions;
  private readonly pipelines: SearchPipelines | undefined;

  constructor(
    private readonly client: Client,
    options: OpenSearchSearchEngineOptions = {},
  ) {
    super(new OpenSearchDocumentStore(client), OPENSEARCH_CHUNKS, options);
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

  // The native path is not a pair of list fetchers for the shared ladder: it is one `hybrid` query
  // that the server fuses through a search pipeline (and the only way to get normalized fusion), so
  // it stays this engine's own alternative to fusing the _msearch lists.
  override async search(query: SearchQuery, options: SearchOptions = {}): Promise<SearchHit[]> {
    const fusion = options.fusion ?? this.defaultFusion;
    return this.searchChunks(query, (hybrid) => {
      if (query.fusion?.method === "convex") return undefined;
      if (fusion === "normalized" && !this.pipelines) {
        return Promise.reject(new FailedPreconditionError("normalized fusion needs OpenSearch's native hybrid query, which this engine does not use"));
      }
      return fusion === "normalized" || this.nativeRrfFits(query, hybrid.k) ? this.nativeHybrid(hybrid, fusion) : undefined;
    }, options.signal);
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
      // Convex fusion is Quarry's own (convex-fusion.ts), on the lists the _msearch path fetches.
      query.fusion?.method !== "convex" &&
      new Set(query.knowledgeBaseIds).size === 1 &&
      (this.options.shards ?? 1) === 1 &&
      isNativeRankConstant(k) &&
      bm25 === vector &&
      bm25 > 0
    );
  }

  private async nativeHybrid({ index, query, terms, vector, candidates }: HybridSearch, fusion: HybridFusion): Promise<SearchHit[]> {
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
              // The graph search gets the same floor of candidates as the _msearch path's (knnBody):
              // pagination_depth still keeps `depth` of them, so both paths fuse the same lists.
              { knn: { embedding: { ...knnClause(query, vector, Math.min(Math.max(depth, MIN_KNN_CANDIDATES), MAX_KNN_K)), _name: VECTOR_QUERY_NAME } } },
            ],
          },
        },
      } as Record<string, unknown>,
    });
    const raw = (body as unknown as { hits: { hits: StoredHit<ChunkSource>[] } }).hits.hits;
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
}

// A filter inside knn is applied during the graph search (Lucene efficient filtering), so it never
// starves the top k the way a post-filter would.
function knnClause(query: SearchQuery, vector: Float32Array, k: number): Record<string, unknown> {
  return { vector: Array.from(vector), k, filter: { bool: { filter: chunkFilters(query) } } };
}

function knnBody(query: SearchQuery, vector: Float32Array, size: number, field: VectorField = "embedding"): Record<string, unknown> {
  // The Lucene engine's graph search keeps k candidates per segment (k is its ef): asked for 3, it
  // can walk past the nearest chunk on a small graph (a vector search for 3 hits missed a 0.59
  // cosine that k = 50 found first). At least 100 candidates, as the Elasticsearch engine asks, and
  // the best `size` of them returned.
  const k = Math.min(Math.max(size, MIN_KNN_CANDIDATES), MAX_KNN_K);
  return {
    size: Math.min(size, MAX_KNN_K),
    _source: { excludes: CHUNK_SOURCE_EXCLUDES },
    query: { knn: { [field]: knnClause(query, vector, k) } },
    sort: SCORE_THEN_CHUNK_ID,
    track_scores: true,
  };
}
