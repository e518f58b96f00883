// No engine needed: an OpenSearch that is down must surface as UnavailableError, never as an empty
// result — whether nothing listens at all, or the node answers the set-up calls and then fails the
// search itself (a stub server stands in for that, so both hybrid paths' own requests are covered).
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { Client } from "@opensearch-project/opensearch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchQuery } from "../../../lib/domain.ts";
import { UnavailableError } from "../../../lib/errors.ts";
import { openOpenSearchStores } from "./open-stores.ts";
import { OpenSearchCatalog } from "./opensearch-catalog.ts";
import { OpenSearchSearchEngine } from "./opensearch-search-engine.ts";

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const hybrid: SearchQuery = {
  knowledgeBaseIds: ["kb_x"],
  text: "fox",
  vector: new Float32Array([1, 0, 0, 0]),
  mode: "hybrid",
  topK: 5,
  minScore: 0,
  documentIds: [],
};

describe("OpenSearch stores without a reachable OpenSearch", () => {
  it("report UnavailableError", async () => {
    const client = new Client({ node: `http://127.0.0.1:${await closedPort()}`, maxRetries: 0, requestTimeout: 2_000 });
    try {
      const engine = new OpenSearchSearchEngine(client);
      await expect(engine.search({ knowledgeBaseIds: ["kb_x"], text: "fox", mode: "bm25", topK: 5, minScore: 0, documentIds: [] })).rejects.toBeInstanceOf(
        UnavailableError,
      );
      await expect(engine.getChunks(["c"])).rejects.toBeInstanceOf(UnavailableError);
      await expect(engine.ensureKnowledgeBase("kb_x", 4)).rejects.toBeInstanceOf(UnavailableError);
      await expect(new OpenSearchCatalog(client).listKnowledgeBases()).rejects.toBeInstanceOf(UnavailableError);

      const native = new OpenSearchSearchEngine(client, { nativeHybrid: { fusion: "rrf" } });
      await expect(native.prepare()).rejects.toBeInstanceOf(UnavailableError);
      await expect(native.search(hybrid)).rejects.toBeInstanceOf(UnavailableError);
      await expect(native.search(hybrid, { fusion: "normalized" })).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await client.close();
    }
  });

  it("fail the start in auto mode instead of quietly choosing the _msearch path", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    await expect(openOpenSearchStores({ port: 0, backend: "opensearch", url, indexPrefix: "quarry", nativeHybrid: "auto", fusion: "rrf" })).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });
});

describe("OpenSearch that fails the search request itself", () => {
  let server: ReturnType<typeof createHttpServer>;
  let url: string;
  const searches: string[] = [];
  // What the stub does with a search: drop the connection, or answer like an overloaded node.
  let failure: "reset" | "503" = "reset";

  beforeAll(async () => {
    server = createHttpServer((request: IncomingMessage, response: ServerResponse) => {
      let body = "";
      request.on("data", (part: Buffer) => (body += part.toString()));
      request.on("end", () => {
        const path = request.url ?? "";
        const json = (status: number, body: unknown) => {
          response.writeHead(status, { "content-type": "application/json" });
          response.end(JSON.stringify(body));
        };
        if (request.method === "GET" && path.includes("/_mapping")) {
          return json(200, { "quarry-chunks-kb_x-v1": { mappings: { _meta: { dimension: 4 } } } });
        }
        if (request.method === "PUT" && path.startsWith("/_search/pipeline/")) return json(200, { acknowledged: true });
        // The steps before a search answer as a healthy node would: the document-vector field is
        // added, and the base holds no document vectors (so the native path is still taken).
        if (request.method !== "GET" && path.includes("/_mapping")) return json(200, { acknowledged: true });
        if (body.includes('"exists":{"field":"document_embedding"}')) return json(200, { hits: { total: { value: 0 }, hits: [] } });
        if (path.includes("_search") || path.includes("_msearch")) {
          searches.push(`${request.method} ${path}`);
          if (failure === "reset") return request.socket.destroy();
          return json(503, { error: { type: "cluster_block_exception", reason: "no master" }, status: 503 });
        }
        json(404, { error: { type: "not_found" }, status: 404 });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it.each(["reset", "503"] as const)("reports UnavailableError from every hybrid path (%s)", async (mode) => {
    failure = mode;
    const client = new Client({ node: url, maxRetries: 0, requestTimeout: 2_000 });
    try {
      const engines = {
        msearch: new OpenSearchSearchEngine(client),
        native: new OpenSearchSearchEngine(client, { nativeHybrid: { fusion: "rrf" } }),
      };
      searches.length = 0;
      await expect(engines.msearch.search(hybrid)).rejects.toBeInstanceOf(UnavailableError);
      await expect(engines.native.search(hybrid)).rejects.toBeInstanceOf(UnavailableError);
      await expect(engines.native.search(hybrid, { fusion: "normalized" })).rejects.toBeInstanceOf(UnavailableError);
      // The failures came from the search requests of each path, not from an earlier step.
      expect(searches).toEqual([
        "POST /_msearch",
        "POST /quarry-chunks-kb_x/_search?search_pipeline=quarry-rrf-60&include_named_queries_score=true",
        "POST /quarry-chunks-kb_x/_search?search_pipeline=quarry-minmax-5000-5000&include_named_queries_score=true",
      ]);
    } finally {
      await client.close();
    }
  });
});
