import { afterEach, describe, expect, it } from "vitest";
import { startRerankStub, type RerankStub, type RerankStubProtocol } from "../../../../lib/testing/rerank-stub.ts";
import { makeHit } from "../../testing/test-hits.ts";
import { HttpReranker } from "./http-reranker.ts";
import { rerankHits } from "./reranker.ts";

/** Relevance = how often "gravel" appears: the fused order below puts the best passage last. */
const gravel = (_query: string, text: string) => text.split("gravel").length - 1;
const candidates = () => [
  makeHit("a", "sand and clay"),
  makeHit("b", "gravel once"),
  makeHit("c", "nothing relevant"),
  makeHit("d", "gravel, gravel and more gravel"),
];

describe.each<RerankStubProtocol>(["tei", "cohere"])("HttpReranker against a %s server", (protocol) => {
  let stub: RerankStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  it("sends the real request shape and reorders the candidates by the server's scores", async () => {
    stub = await startRerankStub({ protocol, score: gravel });
    const reranker = new HttpReranker({ protocol, url: stub.url, model: "bge-reranker-v2-m3", apiKey: "rk-secret" });
    const outcome = await rerankHits("where is the gravel", candidates(), reranker, 3);

    expect(outcome.skipped).toBeUndefined();
    expect(outcome.hits.map((h) => h.chunk.id)).toEqual(["d", "b", "a"]);
    expect(outcome.hits[0].explain.rerankScore).toBe(3);
    expect(outcome.reranked).toBe(4);
    const request = stub.requests[0];
    expect(request.headers.authorization).toBe("Bearer rk-secret");
    if (protocol === "tei") {
      expect(request.path).toBe("/rerank");
      expect(request.body).toMatchObject({ query: "where is the gravel", texts: candidates().map((h) => h.chunk.text) });
    } else {
      expect(request.path).toBe("/v1/rerank");
      expect(request.body).toMatchObject({ model: "bge-reranker-v2-m3", query: "where is the gravel", documents: candidates().map((h) => h.chunk.text), top_n: 4 });
    }
  });

  it("keeps the fused order and says why when the server answers 500", async () => {
    stub = await startRerankStub({ protocol, score: gravel, failWith: () => 500 });
    const reranker = new HttpReranker({ protocol, url: stub.url, model: "m" });
    const outcome = await rerankHits("gravel", candidates(), reranker, 3);
    expect(outcome.hits.map((h) => h.chunk.id)).toEqual(["a", "b", "c"]);
    expect(outcome.hits.every((h) => h.explain.rerankScore === undefined)).toBe(true);
    expect(outcome.skipped).toMatch(new RegExp(`^${protocol} reranker http://127\\.0\\.0\\.1:\\d+/(v1/)?rerank failed: HTTP 500`));
  });

  it("keeps the fused order when the server does not answer in time", async () => {
    stub = await startRerankStub({ protocol, score: gravel, delayMs: () => 2_000 });
    const reranker = new HttpReranker({ protocol, url: stub.url, model: "m", timeoutMs: 200 });
    const started = performance.now();
    const outcome = await rerankHits("gravel", candidates(), reranker, 2);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(outcome.hits.map((h) => h.chunk.id)).toEqual(["a", "b"]);
    expect(outcome.skipped).toMatch(/failed: no answer within 200 ms$/);
  });
});

describe("rerankHits", () => {
  it("keeps the fused order when the server is not there at all", async () => {
    const stub = await startRerankStub({ protocol: "tei", score: gravel });
    await stub.close();
    const outcome = await rerankHits("gravel", candidates(), new HttpReranker({ protocol: "tei", url: stub.url }), 4);
    expect(outcome.hits.map((h) => h.chunk.id)).toEqual(["a", "b", "c", "d"]);
    expect(outcome.skipped).toMatch(/failed: unreachable/);
  });

  it("refuses an answer naming a candidate it was not given", async () => {
    const outcome = await rerankHits("q", candidates(), { name: "odd", rerank: async () => [{ index: 7, score: 1 }] }, 2);
    expect(outcome.skipped).toBe("odd failed: answered index 7 with score 1 for 4 candidates");
    expect(outcome.hits.map((h) => h.chunk.id)).toEqual(["a", "b"]);
  });

  it("puts candidates a top_n cut left out after the scored ones, in fused order", async () => {
    const outcome = await rerankHits("q", candidates(), { name: "cut", rerank: async () => [{ index: 2, score: 0.9 }] }, 4);
    expect(outcome.hits.map((h) => h.chunk.id)).toEqual(["c", "a", "b", "d"]);
  });
});
