import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../lib/config.ts";
import { writeBenchSources } from "../test/fixtures/bench-sources.ts";
import { describeWithShared } from "../test/support/shared-material.ts";
import { generateSyntheticChunks, loadBenchQueries, loadSentencePools, splitEnglishSentences, type SentencePools } from "./synthetic-corpus.ts";

const EVAL_DIR = mkdtempSync(join(tmpdir(), "quarry-bench-sources-"));
let pools: SentencePools;
beforeAll(async () => {
  await writeBenchSources(EVAL_DIR);
  pools = loadSentencePools(EVAL_DIR);
});
afterAll(() => rmSync(EVAL_DIR, { recursive: true, force: true }));

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot;
}

describe("synthetic corpus", () => {
  it("gives the same chunks for the same seed and different chunks for another", () => {
    const take = (seed: number) => [...generateSyntheticChunks(pools, { chunks: 50, seed, dimension: 16 })];
    const first = take(7);
    const again = take(7);
    const other = take(8);
    expect(again.map((c) => c.text)).toEqual(first.map((c) => c.text));
    expect(again.map((c) => Array.from(c.vector))).toEqual(first.map((c) => Array.from(c.vector)));
    expect(other.map((c) => c.text)).not.toEqual(first.map((c) => c.text));
  });

  it("makes unit vectors that cluster by topic", () => {
    const chunks = [...generateSyntheticChunks(pools, { chunks: 400, seed: 1, dimension: 64, topics: 4, topicWeight: 0.5 })];
    for (const c of chunks.slice(0, 20)) expect(cosine(c.vector, c.vector)).toBeCloseTo(1, 5);
    const same: number[] = [];
    const across: number[] = [];
    for (let i = 0; i < 100; i++) {
      for (let j = i + 1; j < 100; j++) (chunks[i].topic === chunks[j].topic ? same : across).push(cosine(chunks[i].vector, chunks[j].vector));
    }
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    // Expected ≈ w = 0.5 within a topic and ≈ 0 across, up to sampling noise in 64 dimensions.
    expect(mean(same)).toBeGreaterThan(0.35);
    expect(Math.abs(mean(across))).toBeLessThan(0.1);
  });

  it("mixes English sentences and Chinese titles in about the asked share", () => {
    const chunks = [...generateSyntheticChunks(pools, { chunks: 500, seed: 3, dimension: 8, chineseShare: 0.3 })];
    const chinese = chunks.filter((c) => /\p{Script=Han}/u.test(c.text)).length;
    expect(chinese / chunks.length).toBeGreaterThan(0.2);
    expect(chinese / chunks.length).toBeLessThan(0.4);
  });

  it("samples queries deterministically, in both languages", () => {
    const a = loadBenchQueries(EVAL_DIR, 30, 5);
    expect(loadBenchQueries(EVAL_DIR, 30, 5)).toEqual(a);
    expect(a.every((q) => q.text.length > 0)).toBe(true);
    expect(new Set(a.map((q) => q.language))).toEqual(new Set(["en", "zh"]));
    expect(a.filter((q) => q.language === "zh").every((q) => /\p{Script=Han}/u.test(q.text))).toBe(true);
  });

  it("names the missing set and the option that points elsewhere when the folder lacks it", () => {
    const empty = mkdtempSync(join(tmpdir(), "quarry-bench-no-sources-"));
    try {
      expect(() => loadSentencePools(empty)).toThrow(ConfigError);
      expect(() => loadSentencePools(empty)).toThrow(/scifact\/corpus\.jsonl is missing.*--eval-dir/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("splits English sentences at sentence ends, not at abbreviations' inner dots", () => {
    expect(splitEnglishSentences("Rates rose by 2.5% in mice. The effect (n = 17) was large! Short.")).toEqual([
      "Rates rose by 2.5% in mice.",
      "The effect (n = 17) was large!",
    ]);
  });
});

describeWithShared("eval", "synthetic corpus from the public SciFact and cMedIR sets", (evalDir) => {
  it("draws its pools and queries from them", () => {
    const real = loadSentencePools(evalDir);
    expect(real.english.length).toBeGreaterThan(1000);
    expect(real.chinese.length).toBeGreaterThan(100);
    expect(loadBenchQueries(evalDir, 30, 5)).toEqual(loadBenchQueries(evalDir, 30, 5));
  });
});
