import { describe, expect, it } from "vitest";
import { clusteredVectors, recall, scaleCorpusVectors } from "./bench-ann.ts";

describe("bench ann", () => {
  it("scores recall as the share of the exact answers' ids found, over all queries", () => {
    expect(recall([[1, 2, 3], [4, 5, 9]], [[1, 2, 3], [4, 5, 6]])).toBe(0.8333);
    expect(recall([[], []], [[1], [2]])).toBe(0);
  });

  it("draws the same normalised vectors for the same seed, and others for another", () => {
    const a = clusteredVectors(300, 5, 16, 7);
    const b = clusteredVectors(300, 5, 16, 7);
    expect(a.vectors).toEqual(b.vectors);
    expect(clusteredVectors(300, 5, 16, 8).vectors).not.toEqual(a.vectors);
    for (let i = 0; i < 300; i++) expect(Math.hypot(...a.vectors.subarray(i * 16, (i + 1) * 16))).toBeCloseTo(1, 5);
  });

  it("draws the scale bench's distribution: every vector within a topic's reach of a few others, none a copy", () => {
    const { vectors, queryVectors } = scaleCorpusVectors(512, 4, 32, 7);
    expect(scaleCorpusVectors(512, 4, 32, 7).vectors).toEqual(vectors);
    const unit = (v: Float32Array, i: number) => v.subarray(i * 32, (i + 1) * 32);
    for (let i = 0; i < 512; i++) expect(Math.hypot(...unit(vectors, i))).toBeCloseTo(1, 5);
    // Half of each vector is its topic's centre: the closest other vector shares it (cosine near 0.5 or more).
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, d) => sum + x * b[d], 0);
    const best = Math.max(...Array.from({ length: 512 }, (_, j) => dot(unit(queryVectors, 0), unit(vectors, j))));
    expect(best).toBeGreaterThan(0.35);
    expect(best).toBeLessThan(0.999);
  });
});
