// Picks where leases live, as the index picks its backend: OpenSearch when OPENSEARCH_URL is set,
// else Elasticsearch when ELASTICSEARCH_URL is, else the embedded SQLite file. Every service of a
// deployment reads the same settings, so all replicas meet in one store.
import { mkdirSync } from "node:fs";
import { dataDir, integer, optional, optionalUrls, searchIndexSettings, sqlitePath, type Env } from "../config.ts";
import { engineConnection } from "../engine-connection.ts";
import type { Logger } from "../logger.ts";
import { DocumentLeaseStore } from "./document-lease-store.ts";
import type { LeaseStore } from "./lease-store.ts";
import { DEFAULT_LEASE_MS, Leases } from "./leases.ts";

export async function openLeaseStore(env: Env): Promise<LeaseStore> {
  // Every node of the cluster, as the index takes them, so a lease outlives the loss of one.
  const openSearch = optionalUrls(env, "OPENSEARCH_URL");
  const elasticsearch = optionalUrls(env, "ELASTICSEARCH_URL");
  if (openSearch) {
    const { OpenSearchLeaseDocuments } = await import("./engine-opensearch-lease-documents.ts");
    const index = `${optional(env, "QUARRY_OPENSEARCH_PREFIX") ?? "quarry"}-leases`;
    return new DocumentLeaseStore(new OpenSearchLeaseDocuments(engineConnection(env, "OPENSEARCH", openSearch), index, searchIndexSettings(env).replicas));
  }
  if (elasticsearch) {
    const { ElasticsearchLeaseDocuments } = await import("./engine-elasticsearch-lease-documents.ts");
    const index = `${optional(env, "QUARRY_ELASTICSEARCH_PREFIX") ?? "quarry"}-leases`;
    return new DocumentLeaseStore(new ElasticsearchLeaseDocuments(engineConnection(env, "ELASTICSEARCH", elasticsearch), index, searchIndexSettings(env).replicas));
  }
  const { SqliteLeaseStore } = await import("./sqlite-lease-store.ts");
  mkdirSync(dataDir(env), { recursive: true });
  return new SqliteLeaseStore(sqlitePath(env));
}

/** QUARRY_LEASE_MS: a lease's time limit, i.e. how long a dead owner's singleton work waits before another replica takes it over. */
export async function openLeases(env: Env, logger: Logger): Promise<Leases> {
  return new Leases(await openLeaseStore(env), { ttlMs: integer(env, "QUARRY_LEASE_MS", DEFAULT_LEASE_MS), logger });
}
