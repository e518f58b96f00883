// Reading configuration from the environment, once, at start-up. One naming scheme across services:
// QUARRY_<SERVICE>_URL for peers, OPENSEARCH_URL / KAFKA_BROKERS / TIKA_URL for engines (an engine
// is used when its address is set), OPENAI_* for model endpoints.
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

export function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

export function required(env: Env, name: string, why: string): string {
  const value = optional(env, name);
  if (!value) throw new ConfigError(`${name} is not set: ${why}`);
  return value;
}

export function integer(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${name} must be a whole number, not "${raw}"`);
  return value;
}

export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

/** An http(s) address (an engine's or an endpoint's), checked at start-up so a typo names its variable. */
export function optionalUrl(env: Env, name: string, example?: string): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && !isHttpUrl(raw)) throw new ConfigError(`${name} must be an http:// or https:// URL${example ? ` such as ${example}` : ""}, not "${raw}"`);
  return raw;
}

/**
 * One or more comma-separated http(s) addresses of the nodes of one cluster: a client that knows
 * several moves on to the next when one is down.
 */
export function optionalUrls(env: Env, name: string, example?: string): string[] | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  const urls = raw.split(",").map((url) => url.trim()).filter((url) => url !== "");
  const bad = urls.find((url) => !isHttpUrl(url));
  if (bad !== undefined || urls.length === 0) {
    throw new ConfigError(`${name} must be an http:// or https:// URL${example ? ` such as ${example}` : ""}, or several separated by commas (the nodes of one cluster), not "${raw}"`);
  }
  return urls;
}

export function dataDir(env: Env): string {
  return resolve(optional(env, "QUARRY_DATA_DIR") ?? ".quarry");
}

/** The embedded mode's single SQLite file: catalog, FTS5, vectors and the event log. */
export function sqlitePath(env: Env): string {
  return join(dataDir(env), "quarry.db");
}

/** Where the gateway leaves uploads too large for an event, and the parser reads them back. */
export function blobDir(env: Env): string {
  return optional(env, "QUARRY_BLOB_DIR") ?? join(dataDir(env), "blobs");
}

export function modelsDir(env: Env): string {
  return optional(env, "QUARRY_MODELS_DIR") ?? join(homedir(), ".cache", "quarry", "models");
}

/**
 * The standard ports: the one table every default port, default peer address and message derives
 * from (the README's "Distributed mode" shows the same table).
 */
export const ServicePorts = { gateway: 8080, parser: 8081, chunker: 8082, embedder: 8083, index: 8084, answer: 8085 } as const;
export type ServiceName = keyof typeof ServicePorts;
export const ServiceNames = Object.keys(ServicePorts) as ServiceName[];

/** The gateway keeps the embedded mode's QUARRY_PORT; the others are QUARRY_<SERVICE>_PORT. */
export function portVariable(name: ServiceName): string {
  return name === "gateway" ? "QUARRY_PORT" : `QUARRY_${name.toUpperCase()}_PORT`;
}

export function urlVariable(name: ServiceName): string {
  return `QUARRY_${name.toUpperCase()}_URL`;
}

/**
 * Where a service listens: QUARRY_<SERVICE>_PORT, else QUARRY_BASE_PORT plus the service's offset
 * in the table (so one variable moves all six), else the standard port.
 */
export function servicePort(env: Env, name: ServiceName): number {
  const variable = portVariable(name);
  if (optional(env, variable) !== undefined) return port(env, variable, ServicePorts[name]);
  if (optional(env, "QUARRY_BASE_PORT") === undefined) return ServicePorts[name];
  const base = port(env, "QUARRY_BASE_PORT", ServicePorts.gateway);
  const value = base + ServicePorts[name] - ServicePorts.gateway;
  if (base === 0 || value > 65535) throw new ConfigError(`QUARRY_BASE_PORT must leave room for six ports (1–65530), not "${base}"`);
  return value;
}

/**
 * Where a service finds a peer: QUARRY_<PEER>_URL, else the peer's port (as servicePort reads it,
 * so a set of port variables shared by all six processes is enough) on this machine.
 */
export function peerUrl(env: Env, name: ServiceName): string {
  const variable = urlVariable(name);
  const explicit = optionalUrl(env, variable, `http://127.0.0.1:${ServicePorts[name]}`);
  if (explicit !== undefined) return explicit.replace(/\/+$/, "");
  const at = servicePort(env, name);
  if (at === 0) throw new ConfigError(`${portVariable(name)}=0 picks a free port, so its peers cannot guess it: set ${variable} for them`);
  return `http://127.0.0.1:${at}`;
}

function port(env: Env, name: string, fallback: number): number {
  const value = integer(env, name, fallback);
  if (value > 65535) throw new ConfigError(`${name} must be a port number (0–65535), not "${value}"`);
  return value;
}

/** A whole number of at least 1, or undefined when unset (the caller then measures a default). */
export function optionalCount(env: Env, name: string): number | undefined {
  if (optional(env, name) === undefined) return undefined;
  const value = integer(env, name, 1);
  if (value < 1) throw new ConfigError(`${name} must be 1 or more, not "${optional(env, name)}"`);
  return value;
}

/**
 * How Quarry's Kafka topics are made (when it creates them). Partitions bound a stage's useful
 * replicas: a consumer group gives each partition to one member, so replicas beyond the partition
 * count stand idle. Unset replication is min(3, brokers), measured at creation.
 */
export function kafkaTopicSettings(env: Env): { partitions: number; replication?: number } {
  const replication = optionalCount(env, "QUARRY_KAFKA_REPLICATION");
  return { partitions: optionalCount(env, "QUARRY_KAFKA_PARTITIONS") ?? 3, ...(replication === undefined ? {} : { replication }) };
}

/**
 * How Quarry's OpenSearch / Elasticsearch indices are made: shards of each chunk index (the small
 * catalog, key, assistant and conversation indices keep one), and replicas of every index. Unset
 * replicas follow the cluster: min(1, data nodes - 1), kept true as nodes come and go.
 */
export function searchIndexSettings(env: Env): { shards: number; replicas?: number } {
  const raw = optional(env, "QUARRY_OPENSEARCH_REPLICAS");
  const replicas = raw === undefined ? undefined : integer(env, "QUARRY_OPENSEARCH_REPLICAS", 0);
  return { shards: optionalCount(env, "QUARRY_OPENSEARCH_SHARDS") ?? 1, ...(replicas === undefined ? {} : { replicas }) };
}
