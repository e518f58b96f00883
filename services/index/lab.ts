// The search engine's internals, exported on purpose for the studies in eval/ and the raw baselines
// in bench/ (which time the engine's own SQL beside the Search RPC): the same BM25 statements, term
// weights, segmentation and fusion the product runs, so a study measures the product's rules rather
// than a copy of them. Product code (app/, cli/) uses ./index.ts.
export { hybridCandidates } from "./search/search-query.ts";
export { CHUNKS_BY_ROWID_SQL, knnSql } from "./sqlite/sqlite-search-engine.ts";
export { bm25Parameters, bm25ScoresSql, bm25Sql, createKeywordTable, keywordTerms } from "./sqlite/space-tables.ts";
export { averageRowLength, weightedQueryTerms, type WeightedTerms } from "./search/query-terms.ts";
export { queryTermCounts, segmentForIndex } from "./search/text-segmenter.ts";
export { DEFAULT_APPROXIMATE_KNN, HNSW_PARAMETERS } from "./sqlite/approximate-knn.ts";
export { placeDocumentHits } from "./search/document-level.ts";
export { hybridSearch, type FetchedLists, type ListRequest } from "./search/hybrid-search.ts";
export { DEFAULT_RRF_K, fuseHits, fuseReciprocalRank, type EngineHit } from "./search/rrf-fusion.ts";
export { OpenSearchSearchEngine } from "./opensearch/opensearch-search-engine.ts";
export { detectNeuralSearch, resolveNativeHybrid } from "./opensearch/opensearch-native-hybrid.ts";
export { ElasticsearchSearchEngine } from "./elasticsearch/elasticsearch-search-engine.ts";
export type { ImportedDocumentChunks } from "./search/search-engine.ts";
export { ENGLISH_STOP_WORDS } from "./search/stop-words.ts";
export { DEFAULT_CONVEX_ALPHA, fuseConvex, type ScoreNormalisation } from "./search/convex-fusion.ts";
