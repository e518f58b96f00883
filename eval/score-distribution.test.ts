import { describe, expect, it } from "vitest";
import { questionScores, sampleByHash, scoreDistribution } from "./score-distribution.ts";

const unit = (...xs: number[]) => {
  const v = Float32Array.from(xs);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

describe("score distribution", () => {
  it("scores each question against its relevant passages and its best other one, skipping its own id", () => {
    const scores = questionScores(
      [{ id: "q1", vector: unit(1, 0) }],
      [
        { id: "q1", vector: unit(1, 0) }, // the question itself (ArguAna): not a distractor
        { id: "rel", vector: unit(1, 1) },
        { id: "far", vector: unit(0, 1) },
        { id: "near", vector: unit(3, 1) },
      ],
      new Map([["q1", new Map([["rel", 1]])]]),
    );
    expect(scores).toHaveLength(1);
    expect(scores[0].relevant[0]).toBeCloseTo(Math.SQRT1_2, 5);
    expect(scores[0].bestIrrelevant).toBeCloseTo(3 / Math.sqrt(10), 5);
  });

  it("pools the sets' percentiles and leaves out questions without a relevant passage", () => {
    const set = (offset: number) => Array.from({ length: 10 }, (_, i) => ({ relevant: [0.5 + offset + i / 100], bestIrrelevant: 0.2 + i / 100 }));
    const distribution = scoreDistribution([
      { name: "a", documents: 30, scores: [...set(0), { relevant: [], bestIrrelevant: 0.9 }] },
      { name: "b", documents: 40, scores: set(0.1) },
    ]);
    expect(distribution.measuredOn).toEqual([
      { set: "a", questions: 10, passages: 30 },
      { set: "b", questions: 10, passages: 40 },
    ]);
    expect(distribution.relevant.p50).toBe(0.59);
    expect(distribution.bestIrrelevant.p50).toBe(0.24);
    expect(distribution.bestIrrelevant.p90).toBe(0.28);
  });

  it("samples the same items in the same order on every run, whatever the input order", () => {
    const items = Array.from({ length: 50 }, (_, i) => `doc-${i}`);
    const sample = sampleByHash(items, (x) => x, 10);
    expect(sample).toHaveLength(10);
    expect(sampleByHash([...items].reverse(), (x) => x, 10)).toEqual(sample);
  });
});
