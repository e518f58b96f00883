import { describe, expect, it } from "vitest";
import type { SearchQuery } from "../../../lib/domain.ts";
import { groupByModel, mergeByRank } from "./cross-model-merge.ts";
import { retrieve, type RetrievalSettings } from "./retrieval-stage.ts";
import { makeHit } from "../testing/test-hits.ts";

describe("mergeByRank", () => {
  it("interleaves the groups' lists rank by rank, a tie at one rank going to the higher score", () => {
    const zh = [makeHit("z1", "", { score: 0.9 }), makeHit("z2", "", { score: 0.8 }), makeHit("z3", "", { score: 0.7 })];
    const en = [makeHit("e1", "", { score: 0.95 }), makeHit("e2", "", { score: 0.4 })];
    expect(mergeByRank([zh, en], 10).map((h) => h.chunk.id)).toEqual(["e1", "z1", "z2", "e2", "z3"]);
    expect(mergeByRank([zh, en], 3).map((h) => h.chunk.id)).toEqual(["e1", "z1", "z2"]);
  });

  it("groups knowledge bases by model in first-seen order", () => {
    expect(groupByModel({ a: "m1", b: "m2", c: "m1" }, ["a", "b", "c"])).toEqual([
      { model: "m1", knowledgeBaseIds: ["a", "c"] },
      { model: "m2", knowledgeBaseIds: ["b"] },
    ]);
  });
});

describe("retrieve across knowledge bases with different models", () => {
  const settings: RetrievalSettings = {
    knowledgeBaseIds: ["kb-zh", "kb-en", "kb-zh2"],
    mode: "hybrid",
    topK: 4,
    minScore: 0,
    documentIds: [],
    embeddingModels: { "kb-zh": "bge-small-zh-v1.5", "kb-en": "all-MiniLM-L6-v2-int8", "kb-zh2": "bge-small-zh-v1.5" },
  };

  function deps(share: Record<string, number> = {}) {
    const embedded: string[] = [];
    const searched: SearchQuery[] = [];
    return {
      embedded,
      searched,
      deps: {
        embed: async (_q: string, model?: string) => {
          embedded.push(model ?? "(none)");
          return { vector: new Float32Array(model === "bge-small-zh-v1.5" ? 512 : 384), knownTokenShare: share[model ?? ""] ?? 1 };
        },
        search: async (q: SearchQuery) => {
          searched.push(q);
          return q.knowledgeBaseIds.map((id) => makeHit(`${id}-hit`, ""));
        },
      },
    };
  }

  it("embeds the question once per model and searches each model's bases with its own vector", async () => {
    const { deps: d, embedded, searched } = deps({ "all-MiniLM-L6-v2-int8": 0.2 });
    const { hits } = await retrieve("大熊猫吃什么", d, settings);
    expect(embedded.sort()).toEqual(["all-MiniLM-L6-v2-int8", "bge-small-zh-v1.5"]);
    const byModel = Object.fromEntries(searched.map((q) => [q.vector!.length, q]));
    expect(byModel[512].knowledgeBaseIds).toEqual(["kb-zh", "kb-zh2"]);
    expect(byModel[384].knowledgeBaseIds).toEqual(["kb-en"]);
    // The gate is each model's own: MiniLM cannot read the question, bge-small-zh can.
    expect(byModel[384].weights).toEqual({ bm25: 1, vector: 0 });
    expect(byModel[512].weights).toEqual({ bm25: 1, vector: 1 });
    // Rank 1 of each group first (equal scores: by id), then the zh group's rank 2.
    expect(hits.map((h) => h.chunk.id)).toEqual(["kb-en-hit", "kb-zh-hit", "kb-zh2-hit"]);
  });

  it("searches once, unembedded, in keyword mode, and once when every base has the same model", async () => {
    const keyword = deps();
    await retrieve("q", keyword.deps, { ...settings, mode: "bm25" });
    expect([keyword.embedded, keyword.searched.length]).toEqual([[], 1]);
    const same = deps();
    await retrieve("q", same.deps, { ...settings, knowledgeBaseIds: ["kb-zh", "kb-zh2"] });
    expect([same.embedded, same.searched.length]).toEqual([["bge-small-zh-v1.5"], 1]);
  });
});
