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
export function optionalUrl(env: Env, name: string): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && !isHttpUrl(raw)) throw new ConfigError(`${name} must be an http:// or https:// URL, not "${raw}"`);
  return raw;
}

export function dataDir(env: Env): string {
  return resolve(optional(env, "QUARRY_DATA_DIR") ?? ".quarry");
}

/** The embedded mode's single SQLite file: catalog, FTS5, vectors and the event log. */
export function sqlitePath(env: Env): string {
  return join(dataDir(env), "quarry.db");
}

export function modelsDir(env: Env): string {
  return optional(env, "QUARRY_MODELS_DIR") ?? join(homedir(), ".cache", "quarry", "models");
}

export const ServicePorts = { gateway: 8080, parser: 8081, chunker: 8082, embedder: 8083, index: 8084, answer: 8085 } as const;
export type ServiceName = keyof typeof ServicePorts;
