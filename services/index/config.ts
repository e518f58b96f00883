import { integer, optional, ServicePorts, sqlitePath, type Env } from "../../lib/config.ts";

export type IndexConfig =
  | { port: number; backend: "sqlite"; file: string }
  | { port: number; backend: "opensearch"; url: string; indexPrefix: string; nativeHybrid: "auto" | "on" | "off" };

/** OpenSearch when OPENSEARCH_URL is set, else the embedded SQLite file. */
export function indexConfig(env: Env): IndexConfig {
  const port = integer(env, "QUARRY_INDEX_PORT", ServicePorts.index);
  const url = optional(env, "OPENSEARCH_URL");
  if (!url) return { port, backend: "sqlite", file: sqlitePath(env) };
  const hybrid = optional(env, "QUARRY_OPENSEARCH_NATIVE_HYBRID") ?? "auto";
  return {
    port,
    backend: "opensearch",
    url,
    indexPrefix: optional(env, "QUARRY_OPENSEARCH_PREFIX") ?? "quarry",
    nativeHybrid: hybrid === "on" || hybrid === "off" ? hybrid : "auto",
  };
}
