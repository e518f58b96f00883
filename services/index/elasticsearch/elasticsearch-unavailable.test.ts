// No engine needed: a client aimed at a loopback port where nothing listens must surface as
// UnavailableError, never as an empty result.
import { createServer } from "node:net";
import { Client } from "@elastic/elasticsearch";
import { describe, expect, it } from "vitest";
import { UnavailableError } from "../../../lib/errors.ts";
import { ElasticsearchCatalog } from "./elasticsearch-catalog.ts";
import { ElasticsearchSearchEngine } from "./elasticsearch-search-engine.ts";

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("Elasticsearch stores without a reachable Elasticsearch", () => {
  it("report UnavailableError", async () => {
    const client = new Client({ node: `http://127.0.0.1:${await closedPort()}`, maxRetries: 0, requestTimeout: 2_000 });
    try {
      const engine = new ElasticsearchSearchEngine(client);
      await expect(engine.search({ knowledgeBaseIds: ["kb_x"], text: "fox", mode: "bm25", topK: 5, minScore: 0, documentIds: [] })).rejects.toBeInstanceOf(
        UnavailableError,
      );
      await expect(engine.getChunks(["c"])).rejects.toBeInstanceOf(UnavailableError);
      await expect(engine.ensureKnowledgeBase("kb_x", 4)).rejects.toBeInstanceOf(UnavailableError);
      await expect(engine.replaceDocumentChunks("kb_x", "doc", "a.txt", [])).rejects.toBeInstanceOf(UnavailableError);
      await expect(new ElasticsearchCatalog(client).listKnowledgeBases()).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await client.close();
    }
  });
});
