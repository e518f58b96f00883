// The retrieval options end to end on the embedded server, through the gateway: metadata filters,
// neighbour expansion, rerank through a local server speaking TEI's /rerank, query expansion through
// the OpenAI-compatible stub, keyword fill, and degradation when the embedding endpoint goes away
// for real (the OpenAI-compatible embedding server Quarry was configured with is closed).
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { QueryExpansion } from "../../gen/quarry/answer/v1/answer_pb.ts";
import { QueryRewriteMode } from "../../gen/quarry/common/v1/assistant_pb.ts";
import { FusionMethod, RetrievalMode, type SearchHit } from "../../gen/quarry/common/v1/common_pb.ts";
import { elasticsearchTestSpace } from "../../services/index/testing/elasticsearch-test-support.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import type { Env } from "../../lib/config.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { engineAddress } from "../support/engines.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { startRerankStub, type RerankStub } from "../../lib/testing/rerank-stub.ts";
import { collectChat, failure, watchAll } from "./e2e-helpers.ts";

const KB = "options";
const TUNNEL = [
  "The Gotthard tunnel opened in 2016 after seventeen years of construction work by many crews.",
  "Its two bores run fifty-seven kilometres beneath the Swiss Alps from Erstfeld to Bodio.",
  "Freight trains use the tunnel mostly at night when passenger traffic is light and slow.",
  "Ventilation shafts at Sedrun bring fresh air down eight hundred metres into the tunnel.",
];
const DOCUMENTS = [
  { fileName: "tunnel.txt", text: TUNNEL.join("\n\n"), metadata: { team: "rail", lang: "en" } },
  { fileName: "gravel.txt", text: "Gravel roads near the tunnel portal need grading every spring after the thaw.", metadata: { team: "roads", lang: "en" } },
  { fileName: "harbour.txt", text: "The harbour lighthouse keeper logs every ship that passes the tunnel ferry.", metadata: { team: "sea", lang: "en" } },
];

const files = (hits: SearchHit[]) => hits.map((h) => h.fileName);

function describeRetrievalOptions(backend: string, backendEnv: () => Env, cleanup: () => Promise<void> = async () => {}) {
describe(`retrieval options on the embedded server (${backend})`, () => {
  let quarry: EmbeddedQuarryFixture;
  let embeddings: OpenAiStub;
  let chat: OpenAiStub;
  let rerank: RerankStub;
  /** What the chat stub answers next, per test. */
  let chatReply = (_messages: { role: string; content: string }[]) => "";
  let rerankStatus: number | undefined;

  beforeAll(async () => {
    embeddings = await startOpenAiStub({ embeddingDimension: 64 });
    chat = await startOpenAiStub({ reply: (messages) => chatReply(messages) });
    rerank = await startRerankStub({ protocol: "tei", score: (_q, text) => (text.includes("Sedrun") ? 0.99 : text.includes("Freight") ? 0.5 : 0.01), failWith: () => rerankStatus });
    quarry = await startEmbeddedQuarry({
      env: {
        ...backendEnv(),
        QUARRY_EMBEDDING_PROVIDER: "openai",
        QUARRY_EMBEDDING_BASE_URL: embeddings.url,
        QUARRY_EMBEDDING_MODEL: "stub-embedding",
        QUARRY_EMBEDDING_DIMENSION: "64",
        OPENAI_BASE_URL: chat.url,
        QUARRY_CHAT_MODEL: "stub-chat",
        QUARRY_RERANK_URL: rerank.url,
        QUARRY_RERANK_PROTOCOL: "tei",
      },
    });
    // Small chunks, no overlap: each paragraph of tunnel.txt is a chunk of its own.
    await quarry.client.createKnowledgeBase({ name: KB, chunking: { chunkSize: 24, chunkOverlap: 0 } });
    const ids = [];
    for (const doc of DOCUMENTS) {
      const res = await quarry.client.uploadDocument({
        header: { knowledgeBase: KB, fileName: doc.fileName, mimeType: "text/plain", metadata: doc.metadata },
        content: new TextEncoder().encode(doc.text),
      });
      ids.push(res.document!.id);
    }
    await watchAll(quarry.client, ids, 60_000);
  }, 90_000);

  afterAll(async () => {
    await quarry?.stop();
    await Promise.all([embeddings?.close().catch(() => {}), chat?.close(), rerank?.close()]);
    await cleanup();
  });

  const search = (query: string, settings: Record<string, unknown> = {}) =>
    quarry.client.search({ query, knowledgeBases: [KB], settings: { mode: RetrievalMode.BM25, topK: 10, ...settings } });

  it("stores each paragraph as a chunk (the premise of the neighbour test)", async () => {
    const { hits } = await search("tunnel Erstfeld Sedrun Freight Gotthard");
    expect(hits.filter((h) => h.fileName === "tunnel.txt")).toHaveLength(4);
  });

  it("filters by document metadata, ANDing the pairs", async () => {
    expect(new Set(files((await search("tunnel")).hits))).toEqual(new Set(["tunnel.txt", "gravel.txt", "harbour.txt"]));
    expect(new Set(files((await search("tunnel", { metadataEquals: { team: "roads" } })).hits))).toEqual(new Set(["gravel.txt"]));
    expect(new Set(files((await search("tunnel", { metadataEquals: { lang: "en", team: "sea" } })).hits))).toEqual(new Set(["harbour.txt"]));
    expect((await search("tunnel", { metadataEquals: { lang: "en", team: "nobody" } })).hits).toEqual([]);
    const hybrid = await search("tunnel", { mode: RetrievalMode.HYBRID, metadataEquals: { team: "rail" } });
    expect(new Set(files(hybrid.hits))).toEqual(new Set(["tunnel.txt"]));
  });

  it("merges a hit with its neighbouring chunks", async () => {
    const { hits } = await search("Erstfeld Bodio", { topK: 1, neighbourChunks: 1 });
    expect(hits).toHaveLength(1);
    expect(hits[0].chunk!.text).toBe(TUNNEL.slice(0, 3).join("\n\n"));
    expect(hits[0].explain!.mergedChunkIds).toHaveLength(2);
    const plain = await search("Erstfeld Bodio", { topK: 1 });
    expect(plain.hits[0].chunk!.text).toBe(TUNNEL[1]);
  });

  it("reranks a widened candidate set through the TEI server", async () => {
    rerankStatus = undefined;
    const before = rerank.requests.length;
    const { hits, notes } = await search("tunnel", { topK: 2, rerank: true });
    expect(hits.map((h) => h.chunk!.text)).toEqual([TUNNEL[3], TUNNEL[2]]);
    expect(hits[0].explain!.rerankScore).toBeCloseTo(0.99);
    expect(notes!.reranker).toMatch(/^tei reranker http:\/\/127\.0\.0\.1:\d+\/rerank$/);
    expect(notes!.rerankSkipped).toBe("");
    // 3 × top-k = 6 candidates asked for: the server saw all 5 chunks that mention the tunnel, not 2.
    expect(rerank.requests.slice(before)[0].body.texts).toHaveLength(5);
  });

  it("keeps the fused order and says why when the reranker answers 500", async () => {
    rerankStatus = 500;
    try {
      const plain = await search("tunnel", { topK: 3 });
      const { hits, notes } = await search("tunnel", { topK: 3, rerank: true });
      expect(hits.map((h) => h.chunk!.id)).toEqual(plain.hits.map((h) => h.chunk!.id));
      expect(notes!.rerankSkipped).toMatch(/^tei reranker .* failed: HTTP 500: model overloaded$/);
      const answer = await collectChat(quarry.client, { question: "tunnel", knowledgeBases: [KB], settings: { rerank: true, mode: RetrievalMode.BM25 } });
      expect(answer.final.retrievalNotes!.rerankSkipped).toMatch(/failed: HTTP 500/);
    } finally {
      rerankStatus = undefined;
    }
  });

  it("multi-query: searches the model's variants and says which", async () => {
    chatReply = () => "Sedrun ventilation shaft\nfreight at night";
    const { hits, notes } = await search("how does air get in", { queryRewrite: QueryRewriteMode.MULTI_QUERY, queryVariants: 2 });
    expect(notes!.queries).toEqual(["how does air get in", "Sedrun ventilation shaft", "freight at night"]);
    expect(hits[0].chunk!.text).toBe(TUNNEL[3]);
  });

  it("HyDE: embeds the model's passage for the vector list", async () => {
    const passage = "Fresh air reaches the tunnel through deep shafts.";
    chatReply = () => passage;
    await search("how does air get in", { mode: RetrievalMode.HYBRID, queryRewrite: QueryRewriteMode.HYDE });
    const embedded = embeddings.requests.filter((r) => r.path === "/v1/embeddings").map((r) => r.body.input).flat();
    expect(embedded).toContain(passage);
  });

  it("fills a short vector list with keyword hits, marked fallback", async () => {
    const strict = await search("Sedrun", { mode: RetrievalMode.VECTOR, minScore: 0.999 });
    expect(strict.hits).toEqual([]);
    const filled = await search("Sedrun", { mode: RetrievalMode.VECTOR, minScore: 0.999, bm25Fill: true });
    expect(filled.hits.map((h) => [h.chunk!.text, h.explain!.fallback])).toEqual([[TUNNEL[3], true]]);
    expect(filled.notes!.fallbackHits).toBe(1);
  });

  it("fuses hybrid by normalised scores when asked, and explains each hit's share", async () => {
    const convex = await search("tunnel ventilation Sedrun", { mode: RetrievalMode.HYBRID, fusion: FusionMethod.CONVEX, convexAlpha: 0.3 });
    expect(convex.hits.length).toBeGreaterThan(1);
    for (const hit of convex.hits) {
      const e = hit.explain!;
      expect(e.vectorWeight).toBe(0.3);
      expect(e.fusedScore).toBeCloseTo(0.3 * e.vectorNormalized! + 0.7 * e.bm25Normalized!, 9);
      expect(hit.score).toBeCloseTo(e.fusedScore, 9);
    }
    expect(convex.hits.map((h) => h.score)).toEqual([...convex.hits.map((h) => h.score)].sort((a, b) => b - a));
    // The best keyword hit sits at the top of BM25's 0–1 scale.
    expect(Math.max(...convex.hits.map((h) => h.explain!.bm25Normalized!))).toBe(1);
    const rrf = await search("tunnel ventilation Sedrun", { mode: RetrievalMode.HYBRID });
    expect(rrf.hits[0].explain!.vectorWeight).toBeUndefined();
    const refused = await failure(() => search("tunnel", { mode: RetrievalMode.HYBRID, fusion: FusionMethod.CONVEX, convexAlpha: 1.5 }));
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.rawMessage).toMatch(/alpha must be between 0 and 1, got 1\.5/);
  });

  it("an assistant's fusion is stored, read back and used by chat unless the request sets its own", async () => {
    const created = await quarry.client.createAssistant({
      assistant: { name: "convex-keeper", knowledgeBases: [{ knowledgeBase: KB }], retrieval: { mode: RetrievalMode.HYBRID, fusion: FusionMethod.CONVEX, convexAlpha: 0.3 } },
    });
    const stored = (await quarry.client.getAssistant({ assistant: created.assistant!.id })).assistant!.retrieval!;
    expect([stored.fusion, stored.convexAlpha]).toEqual([FusionMethod.CONVEX, 0.3]);
    const weights = async (settings: Record<string, unknown> = {}) => {
      const answer = await collectChat(quarry.client, { question: "tunnel ventilation Sedrun", assistant: "convex-keeper", settings });
      const hits = (await quarry.client.getTurn({ turnId: answer.turnId })).turn!.provenance!.lists.flatMap((l) => l.hits);
      expect(hits.length).toBeGreaterThan(0);
      return [...new Set(hits.map((h) => h.explain!.vectorWeight))];
    };
    expect(await weights()).toEqual([0.3]);
    // The request's own fusion wins over the assistant's.
    expect(await weights({ fusion: FusionMethod.RRF })).toEqual([undefined]);
    expect(await weights({ fusion: FusionMethod.CONVEX, convexAlpha: 0.6 })).toEqual([0.6]);
    const refused = await failure(() =>
      quarry.client.updateAssistant({ assistant: "convex-keeper", update: { name: "convex-keeper", knowledgeBases: [{ knowledgeBase: KB }], retrieval: { fusion: FusionMethod.CONVEX, convexAlpha: 1.5 } } }),
    );
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.rawMessage).toMatch(/alpha must be between 0 and 1, got 1\.5/);
    expect((await quarry.client.getAssistant({ assistant: "convex-keeper" })).assistant!.retrieval!.convexAlpha).toBe(0.3);
  });

  it("falls back to keyword search, and says so, when the embedding endpoint is gone", async () => {
    await embeddings.close();
    const { hits, notes } = await search("Sedrun ventilation", { mode: RetrievalMode.HYBRID, topK: 3 });
    expect(notes!.degraded).toMatch(/^vector search unavailable \(.+\); keyword search answered instead$/);
    expect(hits[0].chunk!.text).toBe(TUNNEL[3]);
    expect(hits.every((h) => h.explain!.fallback)).toBe(true);
    const answer = await collectChat(quarry.client, { question: "Sedrun ventilation", knowledgeBases: [KB] });
    expect(answer.final.retrievalNotes!.degraded).toMatch(/^vector search unavailable/);
    expect(answer.final.retrieval!.chunksInContext).toBeGreaterThan(0);
    // `quarry search` says so above the hits, and marks each one.
    const printed = await new Promise<string>((done, fail) =>
      execFile(process.execPath, [resolve("bin/quarry.mjs"), "search", "Sedrun ventilation", "--kb", KB, "--top-k", "2", "--url", quarry.url], { timeout: 120_000 }, (err, stdout) =>
        err ? fail(err) : done(String(stdout)),
      ),
    );
    expect(printed).toMatch(/^degraded: vector search unavailable \(.+\); keyword search answered instead\n1\. tunnel\.txt/);
    expect(printed).toContain("fallback (keyword)");
    // A vector-only search degrades the same way.
    const vectorOnly = await search("Sedrun", { mode: RetrievalMode.VECTOR });
    expect(vectorOnly.notes!.degraded).toMatch(/^vector search unavailable/);
  }, 60_000);
});
}

describeRetrievalOptions("SQLite", () => ({}));

const opensearch = engineAddress("OPENSEARCH_URL");
if (opensearch) {
  const prefix = `quarry-options-${randomBytes(4).toString("hex")}`;
  describeRetrievalOptions("OpenSearch", () => ({ OPENSEARCH_URL: opensearch, QUARRY_OPENSEARCH_PREFIX: prefix }), () => deleteOpenSearchNamespace(opensearch, `${prefix}-`));
} else {
  describe.skip("retrieval options on OpenSearch (skipped: OPENSEARCH_URL not set)", () => {});
}
const elasticsearch = engineAddress("ELASTICSEARCH_URL");
if (elasticsearch) {
  const space = elasticsearchTestSpace(elasticsearch);
  describeRetrievalOptions("Elasticsearch", () => ({ ELASTICSEARCH_URL: elasticsearch, QUARRY_ELASTICSEARCH_PREFIX: space.prefix.replace(/-$/, "") }), () => space.cleanup());
} else {
  describe.skip("retrieval options on Elasticsearch (skipped: ELASTICSEARCH_URL not set)", () => {});
}

describe("retrieval options without a chat model or reranker", () => {
  let quarry: EmbeddedQuarryFixture;
  let embeddings: OpenAiStub;
  beforeAll(async () => {
    embeddings = await startOpenAiStub({ embeddingDimension: 32 });
    quarry = await startEmbeddedQuarry({
      env: { QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: embeddings.url, QUARRY_EMBEDDING_MODEL: "e", QUARRY_EMBEDDING_DIMENSION: "32" },
    });
    await quarry.client.createKnowledgeBase({ name: KB });
  }, 60_000);
  afterAll(async () => {
    await quarry?.stop();
    await embeddings?.close();
  });

  it("refuses query expansion and rerank with FailedPrecondition and what to configure", async () => {
    for (const [queryRewrite, name] of [[QueryRewriteMode.REWRITE, "rewrite"], [QueryRewriteMode.HYDE, "hyde"], [QueryRewriteMode.MULTI_QUERY, "multi_query"]] as const) {
      const err = await failure(() => quarry.client.search({ query: "q", knowledgeBases: [KB], settings: { queryRewrite } }));
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.rawMessage).toBe(`query expansion "${name}" needs a chat model, and none is configured: set OPENAI_BASE_URL and QUARRY_CHAT_MODEL, or search without query expansion`);
    }
    const err = await failure(() => quarry.client.search({ query: "q", knowledgeBases: [KB], settings: { rerank: true } }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toMatch(/no reranker is configured: set QUARRY_RERANK_URL/);
  });

  it("still serves the deprecated query_expansion in its own numbers, and refuses it disagreeing with query_rewrite", async () => {
    // QueryExpansion's numbers are not QueryRewriteMode's (its 1 is REWRITE, there 1 is NONE): each
    // still asks for its own mode, which this Quarry without a chat model names as it refuses.
    for (const [queryExpansion, name] of [[QueryExpansion.REWRITE, "rewrite"], [QueryExpansion.HYDE, "hyde"], [QueryExpansion.MULTI_QUERY, "multi_query"]] as const) {
      const err = await failure(() => quarry.client.search({ query: "q", knowledgeBases: [KB], settings: { queryExpansion } }));
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.rawMessage).toMatch(new RegExp(`^query expansion "${name}" needs a chat model`));
    }
    // The same mode in both fields is no contradiction; different ones are.
    const same = await failure(() => quarry.client.search({ query: "q", knowledgeBases: [KB], settings: { queryExpansion: QueryExpansion.HYDE, queryRewrite: QueryRewriteMode.HYDE } }));
    expect(same.rawMessage).toMatch(/^query expansion "hyde" needs a chat model/);
    for (const call of [
      () => quarry.client.search({ query: "q", knowledgeBases: [KB], settings: { queryExpansion: QueryExpansion.REWRITE, queryRewrite: QueryRewriteMode.NONE } }),
      () => collectChat(quarry.client, { question: "q", knowledgeBases: [KB], settings: { queryExpansion: QueryExpansion.REWRITE, queryRewrite: QueryRewriteMode.NONE } }),
    ]) {
      const err = await failure(call);
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe("settings.query_rewrite asks for none but the deprecated settings.query_expansion asks for rewrite: set query_rewrite alone");
    }
  });

  it("NONE searches the question as asked, over an assistant whose default expands it", async () => {
    await quarry.client.createAssistant({ assistant: { name: "hyde-keeper", knowledgeBases: [{ knowledgeBase: KB }], retrieval: { rewrite: QueryRewriteMode.HYDE } } });
    const refused = await failure(() => collectChat(quarry.client, { question: "q", assistant: "hyde-keeper" }));
    expect(refused.code).toBe(Code.FailedPrecondition);
    expect(refused.rawMessage).toMatch(/^query expansion "hyde" needs a chat model/);
    const asked = await collectChat(quarry.client, { question: "q", assistant: "hyde-keeper", settings: { queryRewrite: QueryRewriteMode.NONE } });
    expect(asked.final.extractive).toBe(true);
    expect(asked.final.retrievalNotes!.queries).toEqual([]);
  });
});
