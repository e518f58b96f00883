import { describe, expect, it } from "vitest";
import { pairedOrder, ratioIntervals, withinArmSpread } from "./bench-observability.ts";
import { roundBootstrap } from "./round-bootstrap.ts";

describe("withinArmSpread", () => {
  it("is the widest p50 ratio between two processes of the same arm, never across arms", () => {
    const spread = withinArmSpread([
      { name: "on", arm: "on", searchP50: 11, documentsPerSecond: 5 },
      { name: "off", arm: "off", searchP50: 10, documentsPerSecond: 5 },
      { name: "on-2", arm: "on", searchP50: 11.22, documentsPerSecond: 5 },
      { name: "off-2", arm: "off", searchP50: 10.5, documentsPerSecond: 5 },
    ]);
    // off-2 / off = 1.05 is wider than on-2 / on = 1.02; on / off (1.10) is the ratio measured, not noise.
    expect(spread).toBeCloseTo(1.05, 10);
  });

  it("is undefined with one process per arm, which carries no noise floor of its own", () => {
    expect(withinArmSpread([{ name: "on", arm: "on", searchP50: 11, documentsPerSecond: 5 }, { name: "off", arm: "off", searchP50: 10, documentsPerSecond: 5 }])).toBeUndefined();
  });
});

describe("ratioIntervals", () => {
  const round = (searchMs: number[], ingestSeconds = 2, documents = 4) => ({ searchMs, ingestSeconds, documents });

  it("is a single point when every round shows the same ratio", () => {
    const off = [round([10, 20, 30]), round([12, 22, 32]), round([11, 21, 31])];
    const on = off.map((r) => round(r.searchMs.map((ms) => ms * 1.02), r.ingestSeconds * 1.05));
    const { searchP50RatioInterval, ingestThroughputRatioInterval, roundSearchP50Ratios } = ratioIntervals(on, off);
    expect(searchP50RatioInterval.low).toBeCloseTo(1.02, 10);
    expect(searchP50RatioInterval.high).toBeCloseTo(1.02, 10);
    expect(ingestThroughputRatioInterval.low).toBeCloseTo(1.05, 10);
    expect(ingestThroughputRatioInterval.high).toBeCloseTo(1.05, 10);
    expect(roundSearchP50Ratios).toEqual([1.02, 1.02, 1.02]);
  });

  it("widens with rounds that disagree, and spans the rounds' own ratios", () => {
    const off = Array.from({ length: 8 }, () => round([100, 100, 100]));
    // Half the rounds on is 10% slower, half 10% faster: the pooled ratio is uncertain either way.
    const on = off.map((_, i) => round([i % 2 === 0 ? 110 : 90, i % 2 === 0 ? 110 : 90, i % 2 === 0 ? 110 : 90]));
    const { searchP50RatioInterval } = ratioIntervals(on, off, { seed: 7 });
    expect(searchP50RatioInterval.low).toBeCloseTo(0.9, 10);
    expect(searchP50RatioInterval.high).toBeCloseTo(1.1, 10);
  });

  it("refuses arms that ran different numbers of rounds", () => {
    expect(() => ratioIntervals([round([1])], [])).toThrow(RangeError);
  });
});

describe("roundBootstrap", () => {
  it("draws the same replicates from the same seed", () => {
    const mean = (picked: readonly number[]) => picked.reduce((a, b) => a + b, 0) / picked.length;
    expect(roundBootstrap(5, mean, { seed: 3 })).toEqual(roundBootstrap(5, mean, { seed: 3 }));
    const { low, high } = roundBootstrap(5, mean, { seed: 3 });
    // Round indices 0–4: the mean of a draw lies between 0 and 4, and its interval around 2.
    expect(low).toBeGreaterThanOrEqual(0);
    expect(low).toBeLessThan(2);
    expect(high).toBeGreaterThan(2);
    expect(high).toBeLessThanOrEqual(4);
  });

  it("needs a round", () => {
    expect(() => roundBootstrap(0, () => 1)).toThrow(RangeError);
  });
});

describe("pairedOrder", () => {
  it("reverses the processes' order from one query to the next, so over a pair each holds every place once", () => {
    const order = ["on", "off", "on-2", "off-2"];
    expect(pairedOrder(order, 0)).toEqual(order);
    expect(pairedOrder(order, 1)).toEqual(["off-2", "on-2", "off", "on"]);
    expect(pairedOrder(order, 2)).toEqual(order);
    expect(order).toEqual(["on", "off", "on-2", "off-2"]);
    const place = (name: string) => pairedOrder(order, 0).indexOf(name) + pairedOrder(order, 1).indexOf(name);
    expect(new Set(order.map(place))).toEqual(new Set([order.length - 1]));
  });
});
