import { describe, expect, it } from "vitest";
import { clusteredVectors, recall } from "./bench-ann.ts";

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
});
