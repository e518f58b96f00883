// A smoke run of bench scale on a tiny corpus with the index forced on: the report's shape and the
// recall measured against the exact scan on the same file, never its timings.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBenchSources } from "../test/fixtures/bench-sources.ts";
import { formatScaleReport, runScaleBench, scaleCurveSvg, type ScaleBenchReport } from "./bench-scale.ts";

describe("bench scale (smoke, embedded exact and HNSW, 300 chunks)", () => {
  let report: ScaleBenchReport;
  let evalDir: string;

  beforeAll(async () => {
    evalDir = await mkdtemp(join(tmpdir(), "quarry-bench-sources-"));
    await writeBenchSources(evalDir);
    report = await runScaleBench({
      sizes: [300],
      arms: ["embedded-exact", "embedded-hnsw"],
      concurrency: [1, 4],
      modes: ["bm25", "hybrid"],
      requests: 4,
      queries: 4,
      recallQueries: 8,
      seed: 11,
      evalDir,
      exactBelow: 100,
    });
  }, 300_000);

  afterAll(async () => {
    if (evalDir) await rm(evalDir, { recursive: true, force: true });
  });

  it("has one cell per arm, mode and concurrency, and hybrid ÷ BM25 for each arm and concurrency", () => {
    const [size] = report.sizes;
    expect(size.chunks).toBe(300);
    expect(size.cells).toHaveLength(2 * 2 * 2);
    for (const cell of size.cells) expect(cell.p95Ms).toBeGreaterThanOrEqual(cell.p50Ms);
    expect(size.hybridOverBm25.map((h) => `${h.arm} ${h.concurrency}`)).toEqual(["embedded-exact 1", "embedded-exact 4", "embedded-hnsw 1", "embedded-hnsw 4"]);
  });

  it("measures the approximate arm's recall against the exact scan, and only that arm's", () => {
    const [exact, hnsw] = report.sizes[0].arms;
    expect(exact.denseRecallAt10).toBeUndefined();
    // An approximate graph on clustered synthetic vectors (many near-equal distances inside a topic):
    // four runs of this smoke measured dense recall 0.9375-1.0. A broken index (vectors missing, the
    // wrong table, a stale copy) falls far below 0.9; the recall goal at scale is the bench's to show.
    expect(hnsw.denseRecallAt10).toBeGreaterThanOrEqual(0.9);
    expect(hnsw.hybridOverlapAt10).toBeGreaterThanOrEqual(0.9);
    for (const arm of report.sizes[0].arms) expect(arm.diskMiB).toBeGreaterThan(0);
  });

  it("formats the tables and draws one line per arm and mode", () => {
    const markdown = formatScaleReport(report);
    expect(markdown).toMatch(/\| embedded-hnsw \| hybrid \| [\d.]+ \/ [\d.]+ \([\d.]+\) \|/);
    expect(markdown).toMatch(/hybrid ÷ BM25/);
    expect(scaleCurveSvg(report).match(/<polyline|<circle/g)?.length).toBeGreaterThanOrEqual(4);
  });
});
