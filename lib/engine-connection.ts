// How the index (and the leases, lib/leases/) reach a secured OpenSearch or Elasticsearch: basic auth (OPENSEARCH_USERNAME /
// OPENSEARCH_PASSWORD, ELASTICSEARCH_USERNAME / ELASTICSEARCH_PASSWORD, or ELASTICSEARCH_API_KEY)
// and a CA certificate for TLS (OPENSEARCH_CA_FILE, ELASTICSEARCH_CA_FILE). Unset: no credentials,
// as the local engines run. The result goes straight into each client's constructor.
import type { ClientOptions as ElasticsearchClientOptions } from "@elastic/elasticsearch";
import type { ClientOptions as OpenSearchClientOptions } from "@opensearch-project/opensearch";
import { ConfigError, optional, type Env } from "./config.ts";
import { caFile, credentialPair } from "./engine-tls.ts";

export interface EngineConnection {
  url: string;
  /** Every node's address when there are several (url is the first): the client fails over between them. */
  nodes?: string[];
  basic?: { username: string; password: string };
  apiKey?: string;
  ca?: Buffer;
}

export function engineConnection(env: Env, engine: "OPENSEARCH" | "ELASTICSEARCH", urls: string | string[]): EngineConnection {
  const nodes = typeof urls === "string" ? [urls] : urls;
  const url = nodes[0]!;
  const basic = credentialPair(env, `${engine}_USERNAME`, `${engine}_PASSWORD`);
  const apiKey = engine === "ELASTICSEARCH" ? optional(env, "ELASTICSEARCH_API_KEY") : undefined;
  if (basic && apiKey) throw new ConfigError("set ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME/ELASTICSEARCH_PASSWORD, not both");
  const ca = caFile(env, `${engine}_CA_FILE`);
  return { url, ...(nodes.length > 1 ? { nodes } : {}), ...(basic ? { basic } : {}), ...(apiKey ? { apiKey } : {}), ...(ca ? { ca } : {}) };
}

export function openSearchClientOptions(c: EngineConnection): OpenSearchClientOptions {
  return { node: c.nodes ?? c.url, ...(c.basic ? { auth: c.basic } : {}), ...(c.ca ? { ssl: { ca: c.ca } } : {}) };
}

export function elasticsearchClientOptions(c: EngineConnection): ElasticsearchClientOptions {
  const auth = c.apiKey ? { apiKey: c.apiKey } : c.basic;
  return { node: c.nodes ?? c.url, ...(auth ? { auth } : {}), ...(c.ca ? { tls: { ca: c.ca } } : {}) };
}
