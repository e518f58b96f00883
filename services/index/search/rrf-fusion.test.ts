import { describe, expect, it } from "vitest";
import type { Chunk } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { fuseHits, fuseReciprocalRank } from "./rrf-fusion.ts";

function hits(...ids: string[]): { id: string; score: number }[] {
  return ids.map((id, i) => ({ id, score: 10 - i }));
}

describe("fuseReciprocalRank", () => {
  it("sums 1 / (k + rank) over the lists an id appears in", () => {
    const fused = fuseReciprocalRank([
      { name: "bm25", hits: hits("a", "b", "c") },
      { name: "vector", hits: hits("b", "d") },
    ]);
    expect(fused.map((e) => e.id)).toEqual(["b", "a", "d", "c"]);
    const b = fused[0];
    expect(b.fusedScore).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(b.ranks).toEqual({ bm25: 2, vector: 1 });
    expect(b.scores).toEqual({ bm25: 9, vector: 10 });
    expect(fused[3]).toEqual({ id: "c", fusedScore: 1 / 63, ranks: { bm25: 3 }, scores: { bm25: 8 } });
  });

  it("uses the given k", () => {
    const [top] = fuseReciprocalRank([{ name: "bm25", hits: hits("a") }, { name: "vector", hits: hits("x", "a") }], 1);
    expect(top.id).toBe("a");
    expect(top.fusedScore).toBeCloseTo(1 / 2 + 1 / 3, 12);
  });

  it("weights each list", () => {
    const fused = fuseReciprocalRank([
      { name: "bm25", hits: hits("words"), weight: 3 },
      { name: "vector", hits: hits("meaning", "words"), weight: 1 },
    ]);
    expect(fused.map((e) => e.id)).toEqual(["words", "meaning"]);
    expect(fused[0].fusedScore).toBeCloseTo(3 / 61 + 1 / 62, 12);
    expect(fused[1].fusedScore).toBeCloseTo(1 / 61, 12);

    const vectorOnly = fuseReciprocalRank([
      { name: "bm25", hits: hits("words"), weight: 0 },
      { name: "vector", hits: hits("meaning"), weight: 1 },
    ]);
    expect(vectorOnly.map((e) => [e.id, e.fusedScore])).toEqual([["meaning", 1 / 61], ["words", 0]]);
  });

  it("breaks ties by the best single rank, then by id", () => {
    // k = 1: "z" first in bm25 scores 1/2; "a" third in vector with weight 2 scores 2/4 — equal.
    const byRank = fuseReciprocalRank(
      [
        { name: "bm25", hits: hits("z") },
        { name: "vector", hits: hits("m", "n", "a"), weight: 2 },
      ],
      1,
    );
    const z = byRank.find((e) => e.id === "z")!;
    const a = byRank.find((e) => e.id === "a")!;
    expect(z.fusedScore).toBe(a.fusedScore);
    expect(byRank.indexOf(z)).toBeLessThan(byRank.indexOf(a));

    const byId = fuseReciprocalRank([
      { name: "bm25", hits: hits("y", "x") },
      { name: "vector", hits: hits("x", "y") },
    ]);
    expect(byId.map((e) => e.id)).toEqual(["x", "y"]);
    const reversed = fuseReciprocalRank([
      { name: "vector", hits: hits("x", "y") },
      { name: "bm25", hits: hits("y", "x") },
    ]);
    expect(reversed.map((e) => e.id)).toEqual(["x", "y"]);
  });

  it("counts an id repeated in one list once, at its best rank", () => {
    const [only] = fuseReciprocalRank([{ name: "bm25", hits: hits("a", "a", "a") }]);
    expect(only).toMatchObject({ id: "a", fusedScore: 1 / 61, ranks: { bm25: 1 } });
  });

  it("reports a list that does not vote without letting it score, break a tie or add an id", () => {
    const fused = fuseReciprocalRank([
      { name: "document", hits: hits("b", "c"), votes: false },
      { name: "bm25", hits: hits("a") },
      { name: "vector", hits: hits("b", "a") },
    ]);
    // a: 1/61 + 1/62, b: 1/61 (its document rank adds nothing); c is in no voting list.
    expect(fused.map((e) => e.id)).toEqual(["a", "b"]);
    expect(fused[1]).toEqual({ id: "b", fusedScore: 1 / 61, ranks: { vector: 1, document: 1 }, scores: { vector: 10, document: 10 } });
    // k = 1: "z" (bm25 #1) and "a" (vector #3, weight 2) tie at 1/2; z's better voting rank decides.
    // Counted, a's document rank 1 would tie the ranks too and the id would put "a" first.
    const tied = fuseReciprocalRank(
      [
        { name: "bm25", hits: hits("z") },
        { name: "vector", hits: hits("m", "n", "a"), weight: 2 },
        { name: "document", hits: hits("a"), votes: false },
      ],
      1,
    );
    expect(tied.map((e) => e.id).filter((id) => id === "a" || id === "z")).toEqual(["z", "a"]);
  });

  it("returns nothing for empty lists and rejects a bad k or weight", () => {
    expect(fuseReciprocalRank([])).toEqual([]);
    expect(fuseReciprocalRank([{ name: "bm25", hits: [] }])).toEqual([]);
    expect(() => fuseReciprocalRank([{ name: "bm25", hits: hits("a") }], 0)).toThrow(InvalidInputError);
    expect(() => fuseReciprocalRank([{ name: "bm25", hits: hits("a"), weight: -1 }])).toThrow(InvalidInputError);
  });
});

describe("fuseHits", () => {
  function chunk(id: string): Chunk {
    return { id, documentId: "d", knowledgeBaseId: "kb", index: 0, text: id, tokenCount: 1, page: 0, pageEnd: 0, sectionPath: [], start: 0, end: 1 };
  }

  it("explains every hit, with zeros for the list it is missing from", () => {
    const result = fuseHits([
      { name: "bm25", hits: [{ chunk: chunk("a"), fileName: "a.txt", score: 7.5 }] },
      { name: "vector", hits: [{ chunk: chunk("b"), fileName: "b.txt", score: 0.9 }, { chunk: chunk("a"), fileName: "a.txt", score: 0.4 }] },
    ]);
    expect(result.map((h) => h.chunk.id)).toEqual(["a", "b"]);
    expect(result[0]).toEqual({
      chunk: chunk("a"),
      fileName: "a.txt",
      score: 1 / 61 + 1 / 62,
      explain: { bm25Rank: 1, bm25Score: 7.5, vectorRank: 2, vectorScore: 0.4, fusedScore: 1 / 61 + 1 / 62 },
    });
    expect(result[1].explain).toEqual({ bm25Rank: 0, bm25Score: 0, vectorRank: 1, vectorScore: 0.9, fusedScore: 1 / 61 });
  });

  it("can take a single list's own score as the hit score", () => {
    const [hit] = fuseHits([{ name: "vector", hits: [{ chunk: chunk("a"), fileName: "a.txt", score: 0.83 }] }], { scoreFrom: "vector", k: 10 });
    expect(hit.score).toBe(0.83);
    expect(hit.explain).toEqual({ bm25Rank: 0, bm25Score: 0, vectorRank: 1, vectorScore: 0.83, fusedScore: 1 / 11 });
  });
});
