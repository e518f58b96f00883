// The secured-engine settings reach the clients: checked on the wire through a pass-through proxy
// in front of the real OpenSearch and Elasticsearch (which run without security here and ignore
// the credentials), and in the options given to the clients for what a local engine cannot show (TLS).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../lib/config.ts";
import { engineAddress } from "../../../test/support/engines.ts";
import { startTcpProxy } from "../../../test/support/tcp-proxy.ts";
import { indexConfig } from "../config.ts";
import { elasticsearchClientOptions, engineConnection, openSearchClientOptions } from "../../../lib/engine-connection.ts";
import { deleteOpenSearchNamespace } from "../opensearch/opensearch-namespace.ts";

describe("engine connection settings", () => {
  it("puts basic auth, an API key and the CA file into each client's options", () => {
    const dir = mkdtempSync(join(tmpdir(), "quarry-ca-"));
    try {
      writeFileSync(join(dir, "ca.pem"), "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
      const os = indexConfig({ OPENSEARCH_URL: "https://search:9200", OPENSEARCH_USERNAME: "quarry", OPENSEARCH_PASSWORD: "pw", OPENSEARCH_CA_FILE: join(dir, "ca.pem") });
      if (os.backend !== "opensearch") throw new Error("expected OpenSearch");
      const options = openSearchClientOptions(os.connection!);
      expect(options.node).toBe("https://search:9200");
      expect(options.auth).toEqual({ username: "quarry", password: "pw" });
      expect(String(options.ssl?.ca)).toContain("BEGIN CERTIFICATE");
      const es = elasticsearchClientOptions(engineConnection({ ELASTICSEARCH_API_KEY: "a2V5", ELASTICSEARCH_CA_FILE: join(dir, "ca.pem") }, "ELASTICSEARCH", "https://es:9200"));
      expect(es.auth).toEqual({ apiKey: "a2V5" });
      expect(String(es.tls?.ca)).toContain("BEGIN CERTIFICATE");
      expect(openSearchClientOptions(engineConnection({}, "OPENSEARCH", "http://127.0.0.1:9200"))).toEqual({ node: "http://127.0.0.1:9200" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails at start-up, naming the variable, on a missing CA file or half a credential", () => {
    expect(() => indexConfig({ OPENSEARCH_URL: "https://s", OPENSEARCH_CA_FILE: "/no/such/ca.pem" })).toThrow(new ConfigError("OPENSEARCH_CA_FILE names /no/such/ca.pem, which cannot be read (ENOENT)"));
    expect(() => indexConfig({ OPENSEARCH_URL: "https://s", OPENSEARCH_USERNAME: "quarry" })).toThrow(/OPENSEARCH_USERNAME and OPENSEARCH_PASSWORD go together/);
    expect(() => indexConfig({ ELASTICSEARCH_URL: "https://s", ELASTICSEARCH_API_KEY: "k", ELASTICSEARCH_USERNAME: "u", ELASTICSEARCH_PASSWORD: "p" })).toThrow(ConfigError);
  });
});

/** Everything the client sent, through a proxy in front of the real engine. */
async function onTheWire(engineUrl: string, use: (proxyUrl: string) => Promise<void>): Promise<string> {
  const target = new URL(engineUrl);
  const seen: Buffer[] = [];
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, (chunk) => seen.push(chunk));
  try {
    await use(`http://${proxy.address}`);
  } finally {
    await proxy.close();
  }
  return Buffer.concat(seen).toString("latin1");
}

const opensearch = engineAddress("OPENSEARCH_URL");
describe.skipIf(!opensearch)("OpenSearch credentials on the wire", () => {
  it("sends OPENSEARCH_USERNAME/PASSWORD as basic auth on the index service's calls", async () => {
    const prefix = `quarry-creds-${randomBytes(4).toString("hex")}`;
    const wire = await onTheWire(opensearch!, async (url) => {
      const config = indexConfig({ OPENSEARCH_URL: url, OPENSEARCH_USERNAME: "quarry-index", OPENSEARCH_PASSWORD: "s3cret", QUARRY_OPENSEARCH_PREFIX: prefix });
      if (config.backend !== "opensearch") throw new Error("expected OpenSearch");
      const { openOpenSearchStores } = await import("../opensearch/open-stores.ts");
      const stores = await openOpenSearchStores(config);
      try {
        await stores.catalog.listKnowledgeBases();
        await stores.apiKeys.list();
      } finally {
        await stores.close();
        await deleteOpenSearchNamespace(opensearch!, `${prefix}-`);
      }
    });
    const expected = `authorization: Basic ${Buffer.from("quarry-index:s3cret").toString("base64")}`;
    const requests = wire.split(/\r\n\r\n/).filter((part) => /^(GET|PUT|POST|HEAD|DELETE) /m.test(part));
    expect(requests.length).toBeGreaterThan(1);
    for (const request of requests) expect(request.toLowerCase()).toContain(expected.toLowerCase());
  }, 60_000);
});

const elasticsearch = engineAddress("ELASTICSEARCH_URL");
describe.skipIf(!elasticsearch)("Elasticsearch credentials on the wire", () => {
  it("sends ELASTICSEARCH_API_KEY on the index service's calls", async () => {
    const prefix = `quarry-creds-${randomBytes(4).toString("hex")}`;
    const wire = await onTheWire(elasticsearch!, async (url) => {
      const config = indexConfig({ ELASTICSEARCH_URL: url, ELASTICSEARCH_API_KEY: "cXVhcnJ5OmtleQ==", QUARRY_ELASTICSEARCH_PREFIX: prefix });
      if (config.backend !== "elasticsearch") throw new Error("expected Elasticsearch");
      const { openElasticsearchStores } = await import("../elasticsearch/open-stores.ts");
      const stores = await openElasticsearchStores(config);
      try {
        await stores.catalog.listKnowledgeBases();
      } finally {
        await stores.close();
        const { Client } = await import("@elastic/elasticsearch");
        const admin = new Client({ node: elasticsearch! });
        const indices = Object.keys(await admin.indices.get({ index: `${prefix}-*`, allow_no_indices: true }));
        if (indices.length) await admin.indices.delete({ index: indices.join(",") });
        await admin.close();
      }
    });
    expect(wire.toLowerCase()).toContain("authorization: apikey cxvhcnj5omtleq==");
  }, 60_000);
});
