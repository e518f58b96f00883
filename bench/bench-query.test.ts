// A smoke run of bench query on a tiny corpus: the report's shape, never its timings.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBenchSources } from "../test/fixtures/bench-sources.ts";
import { defaultModelDir, OnnxEmbedder } from "../services/embedder/index.ts";
import { runQueryBench, type QueryBenchReport } from "./bench-query.ts";
import { formatQueryReport, scaleChartSvg } from "./report.ts";

describe("bench query (smoke, embedded, 200 chunks)", () => {
  let embedder: OnnxEmbedder;
  let report: QueryBenchReport;
  let evalDir: string;

  beforeAll(async () => {
    evalDir = await mkdtemp(join(tmpdir(), "quarry-bench-sources-"));
    await writeBenchSources(evalDir);
    embedder = await OnnxEmbedder.load(defaultModelDir());
    report = await runQueryBench({
      backend: "embedded",
      sizes: [200],
      concurrency: [1, 4],
      readThreads: [0, 2],
      requests: 6,
      modes: ["bm25", "hybrid"],
      queries: 6,
      seed: 11,
      evalDir,
      topK: 5,
      embedder,
    });
  }, 120_000);

  afterAll(async () => {
    await embedder?.close();
    if (evalDir) await rm(evalDir, { recursive: true, force: true });
  });

  it("describes the machine and the baseline", () => {
    expect(report.bench).toBe("query");
    expect(report.backend).toBe("embedded");
    expect(report.machine.cpus).toBeGreaterThan(0);
    expect(report.machine.node).toBe(process.version);
    expect(report.loadAverageEnd).toHaveLength(3);
    expect(report.rawBaseline).toMatch(/FTS5/);
  });

  it("has one cell per read-thread setting, mode and concurrency with the asked number of samples", () => {
    const [size] = report.sizes;
    expect(size.chunks).toBe(200);
    const cells = ["bm25@1", "bm25@4", "hybrid@1", "hybrid@4"];
    expect(size.cells.map((c) => `${c.mode}@${c.concurrency}`)).toEqual([...cells, ...cells]);
    expect(size.cells.map((c) => c.readThreads)).toEqual([0, 0, 0, 0, 2, 2, 2, 2]);
    // The raw arm on threads exists only beside the read threads, with as many samples.
    expect(size.cells.map((c) => c.rawOnThreads?.count)).toEqual([undefined, undefined, undefined, undefined, 6, 6, 6, 6]);
    expect(size.scaling.map((t) => `${t.mode}/${t.readThreads}`)).toEqual(["bm25/0", "hybrid/0", "bm25/2", "hybrid/2"]);
    for (const cell of size.cells) {
      for (const column of [cell.rpc, cell.engine, cell.raw]) {
        expect(column.count).toBe(6);
        expect(column.p50).toBeGreaterThan(0);
        expect(column.p50).toBeLessThanOrEqual(column.p95);
        expect(column.p95).toBeLessThanOrEqual(column.p99);
      }
      expect(cell.rpcOverRawP50).toBeCloseTo(cell.rpc.p50 / cell.raw.p50, 2);
    }
    expect(size.hybridOverBm25.map((r) => r.concurrency)).toEqual([1, 4, 1, 4]);
  });

  it("finds through the RPC what the engine finds for the same query", () => {
    expect(report.sizes[0].rpcEngineAgreement).toBe(1);
  });

  it("renders the table and a scale plot with a point per mode, column and size", () => {
    expect(formatQueryReport(report)).toContain("| hybrid | 2 | 4 |");
    // The plot of one read-thread setting (bench scale runs one).
    const svg = scaleChartSvg([{ ...report, sizes: report.sizes.map((size) => ({ ...size, cells: size.cells.filter((c) => c.readThreads === 2) })) }]);
    // 2 modes × (RPC, raw) × 1 size.
    expect(svg.match(/<circle /g)).toHaveLength(4);
    expect(svg).toContain("embedded hybrid Search RPC");
  });
});
