import { afterEach, describe, expect, it } from "vitest";
import type { Chunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, UnavailableError } from "../../../lib/errors.ts";
import { startOpenAiStub, type OpenAiStub } from "../../../lib/testing/openai-stub.ts";
import { joinSpans } from "./neighbour-expansion.ts";
import { OpenAiChatModel } from "../chat-models/openai-chat-model.ts";
import { fuseQueryLists } from "./query-fusion.ts";
import { retrieveWithOptions, type OptionDeps } from "./retrieval-options.ts";
import type { RetrievalSettings } from "./retrieval-stage.ts";
import { makeHit } from "../testing/test-hits.ts";

const settings: RetrievalSettings = { knowledgeBaseIds: ["kb-1"], mode: "hybrid", topK: 3, minScore: 0, documentIds: [] };

/** A search whose result depends on the mode and the query, recording every query. */
function searchDeps(byMode: Partial<Record<SearchQuery["mode"], (q: SearchQuery) => SearchHit[]>>, embedFails?: Error) {
  const queries: SearchQuery[] = [];
  const embedded: string[] = [];
  const deps: OptionDeps = {
    embed: async (text) => {
      embedded.push(text);
      if (embedFails) throw embedFails;
      return { vector: new Float32Array([1, 0]), knownTokenShare: 1 };
    },
    search: async (q) => {
      queries.push(q);
      const run = byMode[q.mode];
      if (!run) throw new Error(`no ${q.mode} search scripted`);
      return run(q).slice(0, q.topK);
    },
  };
  return { deps, queries, embedded };
}

const hits = (...ids: string[]) => ids.map((id) => makeHit(id, `text of ${id}`));

describe("degradation", () => {
  it("answers with keyword search, marked fallback, when the embedder is unavailable", async () => {
    const { deps, queries } = searchDeps({ bm25: () => hits("k1", "k2") }, new UnavailableError("embedding endpoint http://x/v1 unreachable"));
    const result = await retrieveWithOptions("gravel roads", deps, { ...settings, minScore: 0.4 }, {}, 1000);
    expect(result.notes.degraded).toBe("vector search unavailable (embedding endpoint http://x/v1 unreachable); keyword search answered instead");
    expect(result.hits.map((h) => [h.chunk.id, h.explain.fallback])).toEqual([
      ["k1", true],
      ["k2", true],
    ]);
    // min_score was set in the fused scale, so the keyword search runs without it.
    expect(queries.map((q) => [q.mode, q.minScore])).toEqual([["bm25", 0]]);
  });

  it("propagates the outage when keyword search fails too: never an empty list", async () => {
    const { deps } = searchDeps({}, new UnavailableError("embedder down"));
    await expect(retrieveWithOptions("q", deps, settings, {}, 1000)).rejects.toThrow("embedder down");
  });

  it("does not degrade on a refused request (a model mismatch is the caller's to fix)", async () => {
    const { deps, queries } = searchDeps({ bm25: () => hits("k1") }, new FailedPreconditionError("dimension mismatch"));
    await expect(retrieveWithOptions("q", deps, settings, {}, 1000)).rejects.toBeInstanceOf(FailedPreconditionError);
    expect(queries).toEqual([]);
  });

  it("fills a short hybrid list with keyword hits it lacks, marked fallback, when asked", async () => {
    const { deps } = searchDeps({ hybrid: () => hits("h1"), bm25: () => hits("h1", "k1", "k2", "k3") });
    const plain = await retrieveWithOptions("q", deps, settings, {}, 1000);
    expect(plain.hits.map((h) => h.chunk.id)).toEqual(["h1"]);
    const filled = await retrieveWithOptions("q", deps, settings, { bm25Fill: true }, 1000);
    expect(filled.hits.map((h) => [h.chunk.id, Boolean(h.explain.fallback)])).toEqual([
      ["h1", false],
      ["k1", true],
      ["k2", true],
    ]);
    expect(filled.notes.fallbackHits).toBe(2);
  });
});

describe("query expansion", () => {
  let stub: OpenAiStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });
  const model = (reply: string) => {
    const chat = async () => {
      stub = await startOpenAiStub({ reply: () => reply });
      return new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "writer", maxRetries: 0 });
    };
    return chat();
  };

  it("refuses every mode without a chat model, saying what to configure", async () => {
    const { deps } = searchDeps({ hybrid: () => hits("a") });
    for (const mode of ["rewrite", "hyde", "multi_query"] as const) {
      const refused = retrieveWithOptions("q", deps, settings, { queryExpansion: mode }, 1000);
      await expect(refused).rejects.toBeInstanceOf(FailedPreconditionError);
      await expect(refused).rejects.toThrow(`query expansion "${mode}" needs a chat model, and none is configured: set OPENAI_BASE_URL and QUARRY_CHAT_MODEL`);
    }
    // "none" asks for the question as asked, which needs no model.
    const plain = await retrieveWithOptions("q", deps, settings, { queryExpansion: "none" }, 1000);
    expect(plain.hits.map((h) => h.chunk.id)).toEqual(["a"]);
    expect(plain.notes.queries).toEqual([]);
  });

  it("rewrite: searches the model's standalone query in both lists", async () => {
    const { deps, queries, embedded } = searchDeps({ hybrid: () => hits("a") });
    const result = await retrieveWithOptions("and how long is it?", { ...deps, chatModel: await model('"Gotthard base tunnel length"') }, settings, { queryExpansion: "rewrite" }, 1000);
    expect(queries[0].text).toBe("Gotthard base tunnel length");
    expect(embedded).toEqual(["Gotthard base tunnel length"]);
    expect(result.notes.queries).toEqual(["Gotthard base tunnel length"]);
  });

  it("hyde: embeds the hypothetical passage, keyword search keeps the question", async () => {
    const { deps, queries, embedded } = searchDeps({ hybrid: () => hits("a") });
    const passage = "The Gotthard Base Tunnel is 57 km long and opened in 2016.";
    await retrieveWithOptions("how long is the Gotthard tunnel", { ...deps, chatModel: await model(passage) }, settings, { queryExpansion: "hyde" }, 1000);
    expect(queries[0].text).toBe("how long is the Gotthard tunnel");
    expect(embedded).toEqual([passage]);
    const sent = stub!.requests[0].body.messages;
    expect(sent[0].content).toMatch(/^Write one short passage/);
    expect(sent[1].content).toBe("how long is the Gotthard tunnel");
  });

  it("multi_query: searches the question and each variant, fused by reciprocal rank", async () => {
    const lists: Record<string, SearchHit[]> = {
      "tunnel length": hits("a", "b", "c"),
      "how long is the tunnel": hits("d", "b", "e"),
      "tunnel kilometres": hits("f", "b", "a"),
    };
    const { deps, queries } = searchDeps({ hybrid: (q) => lists[q.text] ?? [] });
    const result = await retrieveWithOptions("tunnel length", { ...deps, chatModel: await model("1. how long is the tunnel\n- tunnel kilometres\ntunnel length\n") }, settings, { queryExpansion: "multi_query", queryVariants: 2 }, 1000);
    expect(queries.map((q) => q.text).sort()).toEqual(["how long is the tunnel", "tunnel kilometres", "tunnel length"]);
    expect(result.notes.queries).toEqual(["tunnel length", "how long is the tunnel", "tunnel kilometres"]);
    // b is in all three lists (at rank 2), a in two: they beat every list's lone first hit.
    expect(result.hits.map((h) => h.chunk.id)).toEqual(["b", "a", "d"]);
    expect(result.hits[0].score).toBeCloseTo(3 / 62, 10);
  });
});

describe("rerank option", () => {
  it("widens the candidates to 3 × top-k, then keeps top-k in the reranker's order", async () => {
    const { deps, queries } = searchDeps({ hybrid: () => hits("a", "b", "c", "d", "e", "f", "g", "h", "i", "j") });
    const reranker = { name: "test", rerank: async (_q: string, texts: string[]) => texts.map((t, index) => ({ index, score: t.endsWith(" i") ? 1 : 0 })) };
    const result = await retrieveWithOptions("q", { ...deps, reranker }, settings, { rerank: true }, 1000);
    expect(queries[0].topK).toBe(9);
    expect(result.hits.map((h) => h.chunk.id)).toEqual(["i", "a", "b"]);
    expect(result.notes).toMatchObject({ reranked: 9, reranker: "test" });
  });

  it("keeps matching corrections first and reranks only the rest, within top-k", async () => {
    const { deps } = searchDeps({ hybrid: () => hits("correction", "a", "b", "c", "d") });
    const seen: string[][] = [];
    // The reranker would put the correction last; it never sees it.
    const reranker = { name: "test", rerank: async (_q: string, texts: string[]) => (seen.push(texts), texts.map((t, index) => ({ index, score: t.endsWith(" d") ? 1 : 0 }))) };
    const keepFirst = (h: SearchHit) => h.chunk.id === "correction";
    const result = await retrieveWithOptions("q", { ...deps, reranker, keepFirst }, settings, { rerank: true }, 1000);
    expect(result.hits.map((h) => h.chunk.id)).toEqual(["correction", "d", "a"]);
    expect(seen[0]).not.toContain("text of correction");
  });

  it("refuses rerank when no reranker is configured", async () => {
    const { deps } = searchDeps({ hybrid: () => hits("a") });
    await expect(retrieveWithOptions("q", deps, settings, { rerank: true }, 1000)).rejects.toThrow(/no reranker is configured: set QUARRY_RERANK_URL/);
  });
});

describe("neighbour expansion", () => {
  /** A document cut into five chunks with 4 characters of overlap, as the chunker stores them. */
  const source = "Alpha one. Bravo two. Charlie three. Delta four. Echo five.";
  const spans = [
    [0, 14],
    [10, 25],
    [21, 40],
    [36, 52],
    [48, source.length],
  ];
  const chunks: Chunk[] = spans.map(([start, end], index) => ({
    id: `c${index}`,
    documentId: "doc",
    knowledgeBaseId: "kb-1",
    index,
    text: source.slice(start, end),
    tokenCount: 3,
    page: 0,
    pageEnd: 0,
    sectionPath: [],
    start,
    end,
  }));
  const hitOf = (i: number): SearchHit => ({ ...makeHit(`c${i}`, chunks[i].text), chunk: chunks[i] });
  const deps = (found: SearchHit[]) => ({
    ...searchDeps({ hybrid: () => found }).deps,
    chunksAt: async (positions: { documentId: string; index: number }[]) => chunks.filter((c) => positions.some((p) => p.documentId === c.documentId && p.index === c.index)),
    countTokens: (text: string) => text.split(/\s+/).length,
  });

  it("merges a hit with the chunks either side, cutting the repeated overlap", async () => {
    const result = await retrieveWithOptions("q", deps([hitOf(2)]), settings, { neighbourChunks: 1 }, 1000);
    expect(result.hits[0].chunk.text).toBe(source.slice(10, 52));
    expect(result.hits[0].chunk).toMatchObject({ id: "c2", start: 10, end: 52 });
    expect(result.hits[0].explain.mergedChunkIds).toEqual(["c1", "c3"]);
    expect(result.notes.mergedNeighbours).toBe(2);
  });

  it("stays within the token budget, nearest first, and never repeats a chunk that is a hit", async () => {
    // Budget 10: the two hits take 6; c1 (before c2... already a hit) is skipped, c3 fits, then no room.
    const result = await retrieveWithOptions("q", deps([hitOf(2), hitOf(1)]), settings, { neighbourChunks: 2 }, 10);
    expect(result.hits[0].explain.mergedChunkIds).toEqual(["c3"]);
    expect(result.hits[1].explain.mergedChunkIds).toBeUndefined();
  });

  it("refuses a window past the limit", async () => {
    await expect(retrieveWithOptions("q", deps([hitOf(0)]), settings, { neighbourChunks: 9 }, 1000)).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("joins chunks with a gap by a line break, a wider gap by a blank line", () => {
    expect(joinSpans([{ text: "ab", start: 0, end: 2 }, { text: "cd", start: 3, end: 5 }])).toBe("ab\ncd");
    expect(joinSpans([{ text: "ab", start: 0, end: 2 }, { text: "cd", start: 4, end: 6 }])).toBe("ab\n\ncd");
  });
});

describe("fuseQueryLists", () => {
  it("prefers a hit's own-merit copy over a fallback copy", () => {
    const fallback = { ...makeHit("a", "x"), explain: { ...makeHit("a", "x").explain, fallback: true } };
    const fused = fuseQueryLists([[fallback], [makeHit("b", "y"), makeHit("a", "x")]], 5);
    expect(fused.find((h) => h.chunk.id === "a")!.explain.fallback).toBeUndefined();
  });
});
