// The Elasticsearch search engine: the shared steps of document-store-engine.ts over the
// Elasticsearch client (elasticsearch-document-store.ts), with a dense_vector (HNSW, cosine) and
// English stemming by the engine or by Quarry (elasticsearch-terms-analysis.ts). Hybrid always
// runs as one _msearch fused by rrf-fusion.ts: the distribution Quarry runs (the Maven integ-test
// zip) has no rank-rrf module, so the native `rrf` retriever does not exist there, and every hit
// must explain its rank in each list anyway.
import type { Client } from "@elastic/elasticsearch";
import type { SearchQuery } from "../../../lib/domain.ts";
import { DocumentStoreEngine, type ChunkIndexDialect, type DocumentStoreEngineOptions } from "../document-store/document-store-engine.ts";
import { CHUNK_SOURCE_EXCLUDES, chunkFilters, SCORE_THEN_CHUNK_ID, type VectorField } from "../document-store/search-documents.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";
import { elasticsearchTermsAnalysis } from "./elasticsearch-terms-analysis.ts";

export type ElasticsearchSearchEngineOptions = DocumentStoreEngineOptions;

// Elasticsearch refuses a kNN k or num_candidates above this.
const MAX_KNN_CANDIDATES = 10_000;

function elasticsearchChunks(client: Client): ChunkIndexDialect {
  return {
    templateSettings: {},
    // The engine's porter_stem where the node has analysis-common, else Quarry's own stems.
    termsAnalysis: () => elasticsearchTermsAnalysis(client),
    // Plain float HNSW, not the int8 quantization 8.x picks by default: scores stay the exact cosine
    // the other engines report, at 4 bytes per dimension.
    vectorMapping: (dimension) => ({ type: "dense_vector", dims: dimension, index: true, similarity: "cosine", index_options: { type: "hnsw" } }),
    knnBody,
  };
}

export class ElasticsearchSearchEngine extends DocumentStoreEngine {
  constructor(client: Client, options: ElasticsearchSearchEngineOptions = {}) {
    super(new ElasticsearchDocumentStore(client), elasticsearchChunks(client), options);
  }
}

function knnBody(query: SearchQuery, vector: Float32Array, size: number, field: VectorField = "embedding"): Record<string, unknown> {
  const k = Math.min(size, MAX_KNN_CANDIDATES);
  return {
    size: k,
    _source: { excludes: CHUNK_SOURCE_EXCLUDES },
    // The filter inside knn applies during the graph search, so it never starves the top k the way
    // a post-filter would. Twice k candidates (at least 100) keeps HNSW recall high on small k.
    query: {
      knn: {
        field,
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
