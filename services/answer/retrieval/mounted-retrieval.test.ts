import { describe, expect, it } from "vitest";
import type { SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { fuseByPriority, retrieveMounted } from "./mounted-retrieval.ts";
import { makeHit } from "../testing/test-hits.ts";

const hit = (id: string, score: number, kb: string): SearchHit => {
  const h = makeHit(id, `text of ${id}`, { score });
  return { ...h, chunk: { ...h.chunk, knowledgeBaseId: kb } };
};
const ids = (hits: SearchHit[]) => hits.map((h) => h.chunk.id);

describe("fuseByPriority", () => {
  it("puts every hit of a higher-priority base before any hit of a lower one, whatever the scores", () => {
    const low = { priority: 1, hits: [hit("l1", 0.9, "low"), hit("l2", 0.8, "low")] };
    const high = { priority: 5, hits: [hit("h1", 0.2, "high"), hit("h2", 0.1, "high")] };
    expect(ids(fuseByPriority([low, high]))).toEqual(["h1", "h2", "l1", "l2"]);
  });

  it("orders bases of one band by their best hit, keeps each base's own order and groups by base", () => {
    const a = { priority: 2, hits: [hit("a1", 0.4, "a"), hit("a2", 0.39, "a")] };
    const b = { priority: 2, hits: [hit("b1", 0.7, "b"), hit("b2", 0.1, "b")] };
    expect(ids(fuseByPriority([a, b]))).toEqual(["b1", "b2", "a1", "a2"]);
  });

  it("breaks a tie within a band by mount order, and skips a chunk already placed", () => {
    const a = { priority: 0, hits: [hit("x", 0.5, "a")] };
    const b = { priority: 0, hits: [hit("y", 0.5, "b"), hit("x", 0.5, "b")] };
    expect(ids(fuseByPriority([a, b]))).toEqual(["x", "y"]);
    expect(fuseByPriority([])).toEqual([]);
  });
});

describe("retrieveMounted", () => {
  it("searches each base alone for its own top-k and records each list with its ranks", async () => {
    const queries: SearchQuery[] = [];
    const deps = {
      embed: async () => ({ vector: new Float32Array([1, 0]), knownTokenShare: 1 }),
      search: async (q: SearchQuery) => {
        queries.push(q);
        const kb = q.knowledgeBaseIds[0];
        return Array.from({ length: q.topK }, (_, i) => hit(`${kb}-${i + 1}`, 0.9 - i * 0.1, kb));
      },
    };
    const result = await retrieveMounted(
      "Which lamp?",
      deps,
      [
        { knowledgeBaseId: "faq", topK: 1, priority: 1 },
        { knowledgeBaseId: "manual", topK: 0, priority: 9 },
      ],
      { knowledgeBaseIds: [], mode: "hybrid", topK: 3, minScore: 0, documentIds: [] },
    );
    expect(queries.map((q) => [q.knowledgeBaseIds, q.topK])).toEqual([
      [["faq"], 1],
      [["manual"], 3],
    ]);
    expect(ids(result.hits)).toEqual(["manual-1", "manual-2", "manual-3", "faq-1"]);
    expect(result.lists.map((l) => [l.knowledgeBaseId, l.priority, l.topK, l.hits.length])).toEqual([
      ["faq", 1, 1, 1],
      ["manual", 9, 3, 3],
    ]);
    expect(result.listRank.get("manual-3")).toBe(3);
    expect(result.listRank.get("faq-1")).toBe(1);
  });
});
