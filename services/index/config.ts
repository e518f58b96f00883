import { ConfigError, integer, optional, optionalUrls, searchIndexSettings, servicePort, sqlitePath, type Env } from "../../lib/config.ts";
import { engineConnection, type EngineConnection } from "../../lib/engine-connection.ts";
import { DEFAULT_APPROXIMATE_KNN, HNSW_PARAMETERS, type ApproximateKnnOptions } from "./sqlite/approximate-knn.ts";
import { DEFAULT_READ_THREADS } from "./sqlite/read-threads.ts";

export type NativeHybridSetting = "auto" | "on" | "off";
/** How hybrid search fuses the BM25 and vector lists: reciprocal rank, or min-max normalized scores with weights. */
export type HybridFusion = "rrf" | "normalized";

export type IndexConfig =
  | { port: number; backend: "sqlite"; file: string; vectorIndex: ApproximateKnnOptions; readThreads: number }
  | { port: number; backend: "opensearch"; url: string; indexPrefix: string; indices?: IndexSettings; nativeHybrid: NativeHybridSetting; fusion: HybridFusion; connection?: EngineConnection }
  | { port: number; backend: "elasticsearch"; url: string; indexPrefix: string; indices?: IndexSettings; connection?: EngineConnection };

export type IndexSettings = ReturnType<typeof searchIndexSettings>;

/** OpenSearch when OPENSEARCH_URL is set, else Elasticsearch when ELASTICSEARCH_URL is, else the embedded SQLite file. */
export function indexConfig(env: Env): IndexConfig {
  const port = servicePort(env, "index");
  const nodes = optionalUrls(env, "OPENSEARCH_URL");
  const url = nodes?.[0];
  const elasticsearchNodes = optionalUrls(env, "ELASTICSEARCH_URL");
  const elasticsearchUrl = elasticsearchNodes?.[0];
  if (!url && elasticsearchUrl) {
    return {
      port,
      backend: "elasticsearch",
      url: elasticsearchUrl,
      indexPrefix: optional(env, "QUARRY_ELASTICSEARCH_PREFIX") ?? "quarry",
      indices: searchIndexSettings(env),
      connection: engineConnection(env, "ELASTICSEARCH", elasticsearchNodes!),
    };
  }
  // Searches and chunk reads on threads of their own (sqlite/read-threads.ts); 0 keeps them on the main thread.
  if (!url) return { port, backend: "sqlite", file: sqlitePath(env), vectorIndex: vectorIndexConfig(env), readThreads: integer(env, "QUARRY_INDEX_READ_THREADS", DEFAULT_READ_THREADS) };
  return {
    port,
    backend: "opensearch",
    url,
    indexPrefix: optional(env, "QUARRY_OPENSEARCH_PREFIX") ?? "quarry",
    indices: searchIndexSettings(env),
    nativeHybrid: oneOf(env, "QUARRY_OPENSEARCH_NATIVE_HYBRID", ["auto", "on", "off"], "auto"),
    fusion: oneOf(env, "QUARRY_OPENSEARCH_FUSION", ["rrf", "normalized"], "rrf"),
    connection: engineConnection(env, "OPENSEARCH", nodes!),
  };
}

/**
 * QUARRY_VECTOR_INDEX=exact turns the embedded approximate kNN index off; QUARRY_VECTOR_INDEX_EXACT_BELOW
 * moves the size under which a base stays exact; QUARRY_VECTOR_INDEX_EXPANSION is the HNSW search expansion.
 */
function vectorIndexConfig(env: Env): ApproximateKnnOptions {
  const expansionSearch = integer(env, "QUARRY_VECTOR_INDEX_EXPANSION", HNSW_PARAMETERS.expansion_search);
  if (expansionSearch < 1) throw new ConfigError(`QUARRY_VECTOR_INDEX_EXPANSION must be at least 1, not ${expansionSearch}`);
  return {
    ...DEFAULT_APPROXIMATE_KNN,
    mode: oneOf(env, "QUARRY_VECTOR_INDEX", ["hnsw", "exact"], DEFAULT_APPROXIMATE_KNN.mode),
    exactBelow: integer(env, "QUARRY_VECTOR_INDEX_EXACT_BELOW", DEFAULT_APPROXIMATE_KNN.exactBelow),
    expansionSearch,
  };
}

// A mistyped value would otherwise silently pick a different retrieval behaviour: fail at start-up.
function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, not "${raw}"`);
}
