import { describe, expect, it } from "vitest";
import type { Chunk } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { fuseConvex } from "./convex-fusion.ts";
import { fuseHits } from "./rrf-fusion.ts";

describe("fuseConvex", () => {
  it("scores alpha · normalised vector + (1 − alpha) · normalised bm25, theoretical minimum by default", () => {
    const fused = fuseConvex(
      [
        { name: "bm25", hits: [{ id: "a", score: 10 }, { id: "b", score: 5 }] },
        { name: "vector", hits: [{ id: "b", score: 0.8 }, { id: "c", score: 0.6 }] },
      ],
      { alpha: 0.8 },
    );
    // bm25 on [0, 10]; cosine on [−1, 0.8].
    const b = 0.2 * 0.5 + 0.8 * 1;
    const c = 0.8 * (1.6 / 1.8);
    const a = 0.2 * 1;
    expect(fused.map((e) => e.id)).toEqual(["b", "c", "a"]);
    expect(fused[0].fusedScore).toBeCloseTo(b, 12);
    expect(fused[1].fusedScore).toBeCloseTo(c, 12);
    expect(fused[2].fusedScore).toBeCloseTo(a, 12);
    expect(fused[0].normalised).toEqual({ bm25: 0.5, vector: 1 });
    expect(fused[2].normalised).toEqual({ bm25: 1 });
  });

  it("min-max sends a list's last hit to 0 however close it is; theoretical-min keeps the distance", () => {
    const lists = [
      { name: "bm25" as const, hits: [{ id: "a", score: 30 }, { id: "y", score: 1 }] },
      { name: "vector" as const, hits: [{ id: "x", score: 0.51 }, { id: "y", score: 0.5 }] },
    ];
    const fused = fuseConvex(lists, { alpha: 0.5, normalisation: "min-max" });
    // min-max: bm25 a 1, y 0; vector x 1, y 0 → a and x tie at 0.5, y scores 0.
    expect(fused.map((e) => [e.id, e.fusedScore])).toEqual([
      ["a", 0.5],
      ["x", 0.5],
      ["y", 0],
    ]);
    const theoretical = fuseConvex(lists, { alpha: 0.5 });
    // theoretical-min: y keeps most of its cosine (1.5 / 1.51) and 1/30 of the top BM25 score, so
    // being in both lists puts it first; a and x tie at 0.5 (then by id).
    expect(theoretical.map((e) => e.id)).toEqual(["y", "a", "x"]);
    expect(theoretical[0].fusedScore).toBeCloseTo(0.5 / 30 + 0.5 * (1.5 / 1.51), 12);
  });

  it("drops the vector list's vote when its weight is 0 (the hybrid gate) and leaves BM25's order", () => {
    const fused = fuseConvex([
      { name: "bm25", hits: [{ id: "a", score: 3 }, { id: "b", score: 2 }] },
      { name: "vector", hits: [{ id: "b", score: 0.9 }, { id: "c", score: 0.8 }], weight: 0 },
    ]);
    expect(fused.map((e) => e.id)).toEqual(["a", "b", "c"]);
    expect(fused[2].fusedScore).toBe(0);
  });

  it("lets a list with votes: false explain without adding score or ids", () => {
    const fused = fuseConvex([
      { name: "bm25", hits: [{ id: "a", score: 2 }] },
      { name: "document", hits: [{ id: "a", score: 0.4 }, { id: "z", score: 0.3 }], votes: false },
    ]);
    expect(fused.map((e) => e.id)).toEqual(["a"]);
    expect(fused[0].ranks).toEqual({ bm25: 1, document: 1 });
    expect(fused[0].fusedScore).toBeCloseTo(0.2, 12);
  });

  it("counts every hit of a list whose scores are all equal fully", () => {
    const fused = fuseConvex([{ name: "bm25", hits: [{ id: "a", score: 0 }, { id: "b", score: 0 }] }], { alpha: 0 });
    expect(fused.map((e) => e.fusedScore)).toEqual([1, 1]);
  });

  it("refuses an alpha outside [0, 1] and a negative weight", () => {
    expect(() => fuseConvex([], { alpha: 1.5 })).toThrow(InvalidInputError);
    expect(() => fuseConvex([], { alpha: Number.NaN })).toThrow(/between 0 and 1/);
    expect(() => fuseConvex([{ name: "bm25", hits: [], weight: -1 }])).toThrow(InvalidInputError);
  });
});

describe("fuseHits with convex fusion", () => {
  const chunk = (id: string): Chunk => ({ id, documentId: "d", knowledgeBaseId: "kb", index: 0, text: id, sectionPath: [], startOffset: 0, endOffset: 1 }) as unknown as Chunk;
  it("explains each hit's normalised scores and the vector weight", () => {
    const [top, second] = fuseHits(
      [
        { name: "bm25", hits: [{ chunk: chunk("a"), fileName: "a.md", score: 4 }] },
        { name: "vector", hits: [{ chunk: chunk("a"), fileName: "a.md", score: 0.5 }, { chunk: chunk("b"), fileName: "b.md", score: -0.5 }] },
      ],
      { convex: { alpha: 0.7 } },
    );
    expect(top.chunk.id).toBe("a");
    expect(top.explain.convex).toEqual({ bm25Normalised: 1, vectorNormalised: 1, vectorWeight: 0.7 });
    expect(top.score).toBeCloseTo(1, 12);
    // −0.5 on the cosine's [−1, 0.5].
    expect(second.explain.convex?.vectorNormalised).toBeCloseTo(1 / 3, 12);
    expect(second.explain.convex?.bm25Normalised).toBe(0);
    expect(second.explain.bm25Rank).toBe(0);
  });

  it("leaves reciprocal rank fusion's explain as it was", () => {
    const [hit] = fuseHits([{ name: "bm25", hits: [{ chunk: chunk("a"), fileName: "a.md", score: 4 }] }]);
    expect(hit.explain.convex).toBeUndefined();
  });
});
