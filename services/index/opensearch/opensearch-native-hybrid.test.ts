// The native hybrid path: how the mode is settled, how explanations are rebuilt from named
// sub-query scores, and — against a real OpenSearch — that the server's RRF orders the contract's
// data as rrf-fusion.ts does, that min-max weights move the order, and which searches go native.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedChunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import { describeWithEngine } from "../../../test/support/engines.ts";
import { segmentQuery } from "../search/text-segmenter.ts";
import { openOpenSearchStores } from "./open-stores.ts";
import { detectNeuralSearch, explainNativeHits, normalizedWeights, resolveNativeHybrid, type NativeHit } from "./opensearch-native-hybrid.ts";
import { OpenSearchSearchEngine } from "./opensearch-search-engine.ts";
import { openSearchTestSpace, type OpenSearchTestSpace } from "../testing/opensearch-test-support.ts";

describe("resolveNativeHybrid", () => {
  const present = async () => true;
  const absent = async () => false;

  it("uses the plugin in auto and on when it is there, never in off", async () => {
    expect(await resolveNativeHybrid("auto", "rrf", present)).toBe(true);
    expect(await resolveNativeHybrid("on", "rrf", present)).toBe(true);
    expect(await resolveNativeHybrid("auto", "rrf", absent)).toBe(false);
    let asked = false;
    expect(
      await resolveNativeHybrid("off", "rrf", async () => {
        asked = true;
        return true;
      }),
    ).toBe(false);
    expect(asked).toBe(false);
  });

  it("fails clearly when the plugin is required and missing", async () => {
    await expect(resolveNativeHybrid("on", "rrf", absent)).rejects.toThrow(FailedPreconditionError);
    await expect(resolveNativeHybrid("on", "rrf", absent)).rejects.toThrow(/opensearch-neural-search/);
    await expect(resolveNativeHybrid("auto", "normalized", absent)).rejects.toThrow(FailedPreconditionError);
    await expect(resolveNativeHybrid("off", "normalized", present)).rejects.toThrow(FailedPreconditionError);
  });

  it("lets a failed plugin lookup fail the start instead of quietly choosing a path", async () => {
    const down = new Error("connect ECONNREFUSED");
    await expect(resolveNativeHybrid("auto", "rrf", () => Promise.reject(down))).rejects.toBe(down);
  });
});

describe("normalizedWeights", () => {
  it("scales the weights to sum to 1 and refuses unusable ones", () => {
    expect(normalizedWeights({ bm25: 1, vector: 1 })).toEqual([0.5, 0.5]);
    expect(normalizedWeights({ bm25: 3, vector: 7 })).toEqual([0.3, 0.7]);
    const [a, b] = normalizedWeights({ bm25: 1, vector: 2 });
    expect(a + b).toBeCloseTo(1, 12);
    expect(() => normalizedWeights({ bm25: 0, vector: 0 })).toThrow(InvalidInputError);
    expect(() => normalizedWeights({ bm25: -1, vector: 2 })).toThrow(InvalidInputError);
  });
});

describe("explainNativeHits", () => {
  const options = { fusion: "rrf" as const, depth: 2, rrfK: 60, weights: { bm25: 1, vector: 1 } };

  it("ranks each list by its raw scores and fuses them like rrf-fusion.ts", () => {
    const hits: NativeHit[] = [
      { id: "a", index: "i", score: 0.0328, bm25: 2.0, vector: 0.9 },
      { id: "b", index: "i", score: 0.0161, vector: 0.95 },
      { id: "c", index: "i", score: 0.0161, bm25: 3.0 },
    ];
    const explained = explainNativeHits(hits, options);
    expect(explained.map((hit) => hit.id)).toEqual(["a", "b", "c"]);
    expect(explained[0].explain).toEqual({ bm25Rank: 2, bm25Score: 2.0, vectorRank: 2, vectorScore: 0.9, fusedScore: 2 / 62 });
    expect(explained[1].explain).toEqual({ bm25Rank: 0, bm25Score: 0, vectorRank: 1, vectorScore: 0.95, fusedScore: 1 / 61 });
    expect(explained[2].explain).toEqual({ bm25Rank: 1, bm25Score: 3.0, vectorRank: 0, vectorScore: 0, fusedScore: 1 / 61 });
    // Equal fused scores keep the server's order (b before c here), whatever the ids say.
    const swapped = explainNativeHits([hits[0], hits[2], hits[1]], options);
    expect(swapped.map((hit) => hit.id)).toEqual(["a", "c", "b"]);
  });

  it("leaves out of a list a hit that matched its sub-query beyond the depth of its index", () => {
    const hits: NativeHit[] = [
      { id: "x", index: "i", score: 0, bm25: 5, vector: 0.1 },
      { id: "y", index: "i", score: 0, bm25: 4 },
      // Matches the words, but two better BM25 hits of index i fill the depth: only the kNN list brought it in.
      { id: "z", index: "i", score: 0, bm25: 3, vector: 0.9 },
      // Another index has its own depth.
      { id: "w", index: "j", score: 0, bm25: 1 },
    ];
    const byId = new Map(explainNativeHits(hits, options).map((hit) => [hit.id, hit.explain]));
    expect(byId.get("z")).toMatchObject({ bm25Rank: 0, bm25Score: 0, vectorRank: 1 });
    expect(byId.get("x")).toMatchObject({ bm25Rank: 1, vectorRank: 2 });
    expect(byId.get("w")).toMatchObject({ bm25Rank: 3 });
  });

  it("keeps the server's score and order for normalized fusion", () => {
    const hits: NativeHit[] = [
      { id: "b", index: "i", score: 0.7, vector: 0.95 },
      { id: "a", index: "i", score: 0.3, bm25: 2.0 },
    ];
    const explained = explainNativeHits(hits, { ...options, fusion: "normalized" });
    expect(explained.map((hit) => [hit.id, hit.score, hit.explain.fusedScore])).toEqual([
      ["b", 0.7, 0.7],
      ["a", 0.3, 0.3],
    ]);
  });
});

// The contract suite's data (search-engine.contract.ts), so these checks run on what it checks.
const CONTRACT_TEXTS = {
  a0: ["doc_a", 0, "The quick brown fox jumps over the lazy dog near the river bank.", [1, 0, 0, 0]],
  a1: ["doc_a", 1, "Photosynthesis converts sunlight into chemical energy inside green plants.", [0, 1, 0, 0]],
  b0: ["doc_b", 0, "Income tax returns are due in April for most residents.", [0, 0, 1, 0]],
  b1: ["doc_b", 1, "最高人民检察院依法对刑事诉讼实行法律监督。", [0, 0, 0, 1]],
  c0: ["doc_c", 0, "人民法院审理民事案件，保护当事人的合法权益。", [0.6, 0.8, 0, 0]],
} as const;

async function seedContractData(engine: OpenSearchSearchEngine): Promise<string> {
  const kb = `kb_native_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  await engine.ensureKnowledgeBase(kb, 4);
  const byDocument = new Map<string, EmbeddedChunk[]>();
  for (const [document, index, text, vector] of Object.values(CONTRACT_TEXTS)) {
    const documentId = `${document}_${kb}`;
    const id = `${documentId}-${index}`;
    const chunk: EmbeddedChunk = {
      id,
      documentId,
      knowledgeBaseId: kb,
      index,
      text,
      tokenCount: text.length,
      page: 0,
      pageEnd: 0,
      sectionPath: [],
      start: 0,
      end: text.length,
      vector: new Float32Array(vector),
    };
    byDocument.set(documentId, [...(byDocument.get(documentId) ?? []), chunk]);
  }
  for (const [documentId, chunks] of byDocument) await engine.replaceDocumentChunks(kb, documentId, `${documentId}.txt`, chunks);
  return kb;
}

function hybrid(kb: string, text: string, vector: number[], overrides: Partial<SearchQuery> = {}): SearchQuery {
  return { knowledgeBaseIds: [kb], text, vector: new Float32Array(vector), mode: "hybrid", topK: 10, minScore: 0, documentIds: [], ...overrides };
}

/** Hits grouped by (nearly) equal fused score: the order between groups is what both paths must share. */
function scoreGroups(hits: SearchHit[]): string[][] {
  const groups: { score: number; ids: string[] }[] = [];
  for (const hit of hits) {
    const last = groups.at(-1);
    if (last && Math.abs(last.score - hit.score) < 1e-9) last.ids.push(hit.chunk.id);
    else groups.push({ score: hit.score, ids: [hit.chunk.id] });
  }
  return groups.map((group) => group.ids.sort());
}

async function pipelineExists(space: OpenSearchTestSpace, id: string): Promise<boolean> {
  try {
    await space.client.searchPipeline.get({ id });
    return true;
  } catch {
    return false;
  }
}

// Query words and vectors chosen to make the two lists disagree in different ways on the contract data.
const QUERIES: [string, number[]][] = [
  ["green plants energy river", [1, 0.2, 0.1, 0.05]],
  ["fox", [1, 0, 0, 0]],
  ["人民 tax", [0, 0, 0.7, 0.7]],
  ["photosynthesis 检察 river", [0.6, 0.8, 0, 0]],
  ["river tax law sunlight", [0, 1, 0.2, 0]],
  ["?!", [0.9, 0.3, 0, 0]],
];

describeWithEngine("OPENSEARCH_URL", "OpenSearch native hybrid", (url) => {
  let space: OpenSearchTestSpace;
  let native: OpenSearchSearchEngine;
  let client: OpenSearchSearchEngine;
  let kb: string;

  beforeAll(async () => {
    space = openSearchTestSpace(url);
    // Two engines over the same indices: one fuses on the server, one in rrf-fusion.ts.
    native = new OpenSearchSearchEngine(space.client, { indexPrefix: `${space.prefix}chunks-`, nativeHybrid: { fusion: "rrf", pipelinePrefix: space.prefix } });
    client = new OpenSearchSearchEngine(space.client, { indexPrefix: `${space.prefix}chunks-` });
    await native.prepare();
    kb = await seedContractData(native);
  });
  afterAll(async () => {
    await native?.close();
    await client?.close();
    await space?.cleanup();
  });

  it("finds the neural-search plugin on this cluster", async () => {
    expect(await detectNeuralSearch(space.client)).toBe(true);
  });

  it("orders the contract's data like client-side RRF, with the same explanations", async () => {
    let strictlyOrdered = 0;
    for (const [text, vector] of QUERIES) {
      const fromServer = await native.search(hybrid(kb, text, vector));
      const fromClient = await client.search(hybrid(kb, text, vector));
      expect(fromServer.length).toBeGreaterThan(0);
      expect(scoreGroups(fromServer)).toEqual(scoreGroups(fromClient));
      const explained = new Map(fromClient.map((hit) => [hit.chunk.id, hit.explain]));
      for (const hit of fromServer) {
        const expected = explained.get(hit.chunk.id)!;
        expect(hit.explain.bm25Rank).toBe(expected.bm25Rank);
        expect(hit.explain.vectorRank).toBe(expected.vectorRank);
        expect(hit.explain.bm25Score).toBeCloseTo(expected.bm25Score, 5);
        expect(hit.explain.vectorScore).toBeCloseTo(expected.vectorScore, 5);
        expect(hit.explain.fusedScore).toBeCloseTo(expected.fusedScore, 12);
      }
      strictlyOrdered += scoreGroups(fromClient).filter((group) => group.length === 1).length;
    }
    // Ties aside, most positions are strictly ordered, so the comparison above says something.
    expect(strictlyOrdered).toBeGreaterThan(10);
  });

  it("fuses on the server in the same order before Quarry re-derives the scores", async () => {
    // The engine re-sorts the server's hits by the double-precision fused scores; this checks that
    // the server's own order (its float32 RRF scores) already agrees, query by query.
    for (const [text, vector] of QUERIES.slice(0, 5)) {
      const expected = await client.search(hybrid(kb, text, vector, { candidates: 50 }));
      const { body } = await space.client.search({
        index: native.aliasFor(kb),
        search_pipeline: `${space.prefix}rrf-60`,
        body: {
          size: 100,
          _source: false,
          query: {
            hybrid: {
              pagination_depth: 50,
              queries: [{ match: { search_terms: segmentQuery(text).join(" ") } }, { knn: { embedding: { vector, k: 50 } } }],
            },
          },
        } as Record<string, unknown>,
      });
      const serverHits = (body as unknown as { hits: { hits: { _id: string; _score: number }[] } }).hits.hits;
      const fusedById = new Map(expected.map((hit) => [hit.chunk.id, hit.score]));
      const asGroups = scoreGroups(serverHits.map((hit) => ({ chunk: { id: hit._id }, score: fusedById.get(hit._id)! }) as unknown as SearchHit));
      expect(asGroups).toEqual(scoreGroups(expected));
      for (const hit of serverHits) expect(hit._score).toBeCloseTo(fusedById.get(hit._id)!, 6);
    }
  });

  it("runs an equal-weight RRF search with another constant natively, and a weighted one on _msearch", async () => {
    const [text, vector] = QUERIES[0];
    const fromServer = await native.search(hybrid(kb, text, vector, { rrfK: 10 }));
    expect(await pipelineExists(space, `${space.prefix}rrf-10`)).toBe(true);
    expect(scoreGroups(fromServer)).toEqual(scoreGroups(await client.search(hybrid(kb, text, vector, { rrfK: 10 }))));
    expect(fromServer[0].explain.fusedScore).toBeCloseTo(1 / (10 + fromServer[0].explain.bm25Rank) + 1 / (10 + fromServer[0].explain.vectorRank), 12);

    // 2.19's RRF pipeline has no weights: this must not make (or need) an rrf-7 pipeline.
    const weighted = await native.search(hybrid(kb, text, vector, { rrfK: 7, weights: { bm25: 1, vector: 3 } }));
    expect(await pipelineExists(space, `${space.prefix}rrf-7`)).toBe(false);
    expect(weighted[0].explain.fusedScore).toBeCloseTo(
      (weighted[0].explain.bm25Rank ? 1 / (7 + weighted[0].explain.bm25Rank) : 0) + 3 / (7 + weighted[0].explain.vectorRank),
      12,
    );
  });

  it("fuses min-max normalized scores with weights that shift the order", async () => {
    const [text, vector] = ["green plants energy river tax", [1, 0.2, 0.1, 0.05]];
    const words = await client.search({ ...hybrid(kb, text, vector), mode: "bm25" });
    const nearest = await client.search({ ...hybrid(kb, text, vector), mode: "vector" });
    expect(words[0].chunk.id).not.toBe(nearest[0].chunk.id);

    const wordsHeavy = await native.search(hybrid(kb, text, vector, { weights: { bm25: 0.9, vector: 0.1 } }), { fusion: "normalized" });
    const vectorHeavy = await native.search(hybrid(kb, text, vector, { weights: { bm25: 0.1, vector: 0.9 } }), { fusion: "normalized" });
    expect(wordsHeavy[0].chunk.id).toBe(words[0].chunk.id);
    expect(vectorHeavy[0].chunk.id).toBe(nearest[0].chunk.id);
    expect(await pipelineExists(space, `${space.prefix}minmax-9000-1000`)).toBe(true);

    // Every hit's fused score is the weighted mean of its min-max normalized list scores (2.19 puts a
    // list's lowest score at 0.001, not 0, and counts an absent list as 0).
    for (const [hits, weights] of [
      [wordsHeavy, [0.9, 0.1]],
      [vectorHeavy, [0.1, 0.9]],
    ] as const) {
      const bm25Scores = hits.filter((hit) => hit.explain.bm25Rank > 0).map((hit) => hit.explain.bm25Score);
      const vectorScores = hits.filter((hit) => hit.explain.vectorRank > 0).map((hit) => hit.explain.vectorScore);
      expect(bm25Scores.length).toBeGreaterThan(1);
      const normalize = (score: number, all: number[]) => Math.max(0.001, (score - Math.min(...all)) / (Math.max(...all) - Math.min(...all)));
      hits.forEach((hit, i) => {
        const expected =
          (hit.explain.bm25Rank ? weights[0] * normalize(hit.explain.bm25Score, bm25Scores) : 0) +
          (hit.explain.vectorRank ? weights[1] * normalize(hit.explain.vectorScore, vectorScores) : 0);
        expect(hit.explain.fusedScore).toBeCloseTo(expected, 4);
        expect(hit.score).toBe(hit.explain.fusedScore);
        if (i > 0) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hit.score);
      });
      expect(hits.map((hit) => hit.explain.bm25Rank).filter((rank) => rank > 0).sort()).toEqual(words.map((_, i) => i + 1));
    }
  });

  it("refuses normalized fusion on an engine without the native path", async () => {
    const [text, vector] = QUERIES[0];
    await expect(client.search(hybrid(kb, text, vector), { fusion: "normalized" })).rejects.toBeInstanceOf(FailedPreconditionError);
  });

  it("settles the mode at start-up and creates the default pipeline", async () => {
    const own = openSearchTestSpace(url);
    const base = { port: 0, backend: "opensearch" as const, url, indexPrefix: own.prefix.slice(0, -1) };
    try {
      const auto = await openOpenSearchStores({ ...base, nativeHybrid: "auto", fusion: "rrf" });
      expect(auto.engine.usesNativeHybrid).toBe(true);
      expect(await pipelineExists(own, `${own.prefix}rrf-60`)).toBe(true);
      await auto.close();
      const off = await openOpenSearchStores({ ...base, nativeHybrid: "off", fusion: "rrf" });
      expect(off.engine.usesNativeHybrid).toBe(false);
      await off.close();
      const normalized = await openOpenSearchStores({ ...base, nativeHybrid: "on", fusion: "normalized" });
      expect(await pipelineExists(own, `${own.prefix}minmax-5000-5000`)).toBe(true);
      await normalized.close();
      await expect(openOpenSearchStores({ ...base, nativeHybrid: "off", fusion: "normalized" })).rejects.toBeInstanceOf(FailedPreconditionError);
    } finally {
      await own.cleanup();
    }
  });
});
