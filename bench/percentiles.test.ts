import { describe, expect, it } from "vitest";
import { percentile, ratio, summarize } from "./percentiles.ts";

describe("percentile (nearest rank)", () => {
  it("picks the smallest sample with at least p% at or below it", () => {
    // 10 samples: rank = ceil(p/100 * 10) → p50 is the 5th, p95 and p99 the 10th, p10 the 1st.
    const samples = [9, 1, 8, 2, 7, 3, 6, 4, 5, 10];
    expect(percentile(samples, 50)).toBe(5);
    expect(percentile(samples, 95)).toBe(10);
    expect(percentile(samples, 99)).toBe(10);
    expect(percentile(samples, 10)).toBe(1);
    expect(percentile(samples, 11)).toBe(2);
  });

  it("handles 100 samples and a single one", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted order
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile([42], 99)).toBe(42);
  });

  it("refuses no samples and a p outside (0, 100]", () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it("does not reorder the caller's array", () => {
    const samples = [3, 1, 2];
    percentile(samples, 50);
    expect(samples).toEqual([3, 1, 2]);
  });
});

describe("summarize", () => {
  it("reports count, percentiles, mean and max", () => {
    // 20 samples 1..20: p50 rank 10, p95 rank 19, p99 rank 20; mean 10.5.
    const s = summarize(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(s).toEqual({ count: 20, p50: 10, p95: 19, p99: 20, mean: 10.5, max: 20 });
  });
});

describe("ratio", () => {
  it("divides and rounds to three places, NaN for a zero baseline", () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(1, 3)).toBe(0.333);
    expect(ratio(1, 0)).toBeNaN();
  });
});
