// `quarry bench scale`: how search cost grows with the corpus, per engine, with the model out of the
// way. At each size the same seeded synthetic corpus (synthetic-corpus.ts) is loaded through the
// engine's write path into every arm — embedded SQLite with the exact scan, embedded SQLite with the
// approximate (HNSW) index, and OpenSearch when its address is set — and the arms are then measured
// side by side, interleaved in rounds so drift in the shared machine's load hits them alike: Search
// RPC p50/p95 and throughput per mode and concurrency, hybrid ÷ BM25, the approximate dense list's
// recall@10 against the exact scan on the same file, load rate, RSS and disk.
//
// Queries are embedded by the OpenAI-compatible stub (hashing vectors over HTTP), so an RPC costs
// what Quarry and the engine cost, not a MiniLM pass (≈ 10–20 ms here, which would hide the engine).
// Recall is measured in-process with query vectors drawn like the corpus's (the chunks the generator
// yields after the corpus, not loaded): real questions land near real passages, and the stub's
// hashing vectors land nowhere in particular, which would understate an index's recall.
import type { RetrievalMode, SearchQuery } from "../lib/domain.ts";
import { modeToProto } from "../lib/proto-convert.ts";
import { startOpenAiStub, type OpenAiStub } from "../lib/testing/openai-stub.ts";
import { indexConfig, openReadOnlyDatabase, SqliteSearchEngine, type SearchEngine } from "../services/index/index.ts";
import { sqlitePath } from "../lib/config.ts";
import { startBenchBackend, type BackendName, type BenchBackend } from "./bench-backend.ts";
import { runClosedLoop } from "./load-runner.ts";
import { describeMachine, loadAverageNow, machineLine, type MachineInfo } from "./machine.ts";
import { ratio, summarize } from "./percentiles.ts";
import { lineChartSvg } from "./svg-chart.ts";
import { generateSyntheticChunks, loadBenchQueries, loadIntoEngine, loadSentencePools, type BenchQuery, type SentencePools } from "./synthetic-corpus.ts";

export type ScaleArmName = "embedded-exact" | "embedded-hnsw" | "opensearch";

export interface ScaleBenchOptions {
  sizes: number[];
  arms: ScaleArmName[];
  opensearchUrl?: string;
  concurrency: number[];
  modes: RetrievalMode[];
  /** RPCs per arm, mode and concurrency (split over the rounds). */
  requests: number;
  /** Distinct query texts cycled through. */
  queries: number;
  /** In-distribution query vectors for recall@10. */
  recallQueries: number;
  seed: number;
  evalDir: string;
  /** The embedded-hnsw arm's QUARRY_VECTOR_INDEX_EXACT_BELOW (the store's default when unset). */
  exactBelow?: number;
  progress?(line: string): void;
}

export interface ScaleCell {
  arm: ScaleArmName;
  mode: RetrievalMode;
  concurrency: number;
  p50Ms: number;
  p95Ms: number;
  requestsPerSecond: number;
}

export interface ScaleArmResult {
  arm: ScaleArmName;
  /** Chunks/s through the engine's write path (SearchEngine.replaceDocumentChunks), no model. */
  loadChunksPerSecond: number;
  loadSeconds: number;
  /** The first dense search after loading, in seconds: builds the approximate index where there is one. */
  firstDenseSearchSeconds: number;
  /** The Quarry's own first RPC (its index service builds its own copy of the approximate index). */
  firstRpcSeconds: number;
  /** RSS growth of this process over the arm's load and first searches (the embedded arms' store and index live here; OpenSearch's in its JVM). */
  rssDeltaMiB: number;
  diskMiB: number;
  /** embedded-hnsw: share of the exact scan's top-10 dense hits its index returned. */
  denseRecallAt10?: number;
  /** embedded-hnsw: share of the exact engine's hybrid top-10 it returned. */
  hybridOverlapAt10?: number;
}

export interface ScaleSizeResult {
  chunks: number;
  arms: ScaleArmResult[];
  cells: ScaleCell[];
  /** hybrid RPC p50 ÷ bm25 RPC p50 per arm and concurrency: the goal is ≤ 1.1. */
  hybridOverBm25: { arm: ScaleArmName; concurrency: number; p50: number }[];
  processRssMiB: number;
  loadAverage: [number, number, number];
}

export interface ScaleBenchReport {
  bench: "scale";
  backend: "all";
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  settings: Omit<ScaleBenchOptions, "progress" | "opensearchUrl">;
  sizes: ScaleSizeResult[];
}

const DIMENSION = 384;
const ROUNDS = 2;
const WARMUP = 10;

interface Arm {
  name: ScaleArmName;
  backend: BenchBackend;
  knowledgeBaseId: string;
  /** embedded-hnsw only: a second engine on the same file, scanning exactly (the truth for recall). */
  exact?: SearchEngine;
  result: ScaleArmResult;
}

export async function runScaleBench(options: ScaleBenchOptions): Promise<ScaleBenchReport> {
  const machine = describeMachine();
  const log = options.progress ?? (() => {});
  const pools = loadSentencePools(options.evalDir);
  const queries = loadBenchQueries(options.evalDir, options.queries, options.seed);
  const stub = await startOpenAiStub({ embeddingDimension: DIMENSION });
  const sizes: ScaleSizeResult[] = [];
  try {
    for (const size of options.sizes) sizes.push(await benchOneSize(size, options, pools, queries, stub, log));
  } finally {
    await stub.close();
  }
  const { progress: _progress, opensearchUrl: _url, ...settings } = options;
  return { bench: "scale", backend: "all", machine, loadAverageEnd: loadAverageNow(), settings, sizes };
}

async function benchOneSize(
  size: number,
  options: ScaleBenchOptions,
  pools: SentencePools,
  queries: BenchQuery[],
  stub: OpenAiStub,
  log: (line: string) => void,
): Promise<ScaleSizeResult> {
  const arms: Arm[] = [];
  try {
    // One arm after another, so each one's RSS growth is its own.
    for (const name of options.arms) arms.push(await startArm(name, size, options, pools, stub, log));
    for (const arm of arms) {
      if (!arm.exact) continue;
      await measureRecall(arm, size, options, pools, queries);
      log(`[scale ${size}] ${arm.name}: dense recall@10 ${arm.result.denseRecallAt10}, hybrid overlap@10 ${arm.result.hybridOverlapAt10} against the exact scan`);
    }

    const cells: ScaleCell[] = [];
    for (const mode of options.modes) {
      for (const concurrency of options.concurrency) {
        const samples = new Map<ScaleArmName, { latencies: number[]; seconds: number }>(arms.map((a) => [a.name, { latencies: [], seconds: 0 }]));
        const rpc = (arm: Arm) => (n: number) => {
          const query = queries[n % queries.length];
          return arm.backend.client.search({ query: query.text, knowledgeBases: [arm.knowledgeBaseId], settings: { mode: modeToProto(mode), topK: 10 } });
        };
        for (const arm of arms) await runClosedLoop(rpc(arm), { concurrency, requests: WARMUP });
        const perRound = Math.ceil(options.requests / ROUNDS);
        for (let round = 0; round < ROUNDS; round++) {
          // The arms' order alternates by round, so neither always runs on the warmer machine.
          for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
            const started = performance.now();
            const latencies = await runClosedLoop((n) => rpc(arm)(n + round * perRound), { concurrency, requests: perRound });
            const sample = samples.get(arm.name)!;
            sample.seconds += (performance.now() - started) / 1000;
            sample.latencies.push(...latencies);
          }
        }
        stub.requests.splice(0);
        for (const arm of arms) {
          const sample = samples.get(arm.name)!;
          const latency = summarize(sample.latencies);
          cells.push({ arm: arm.name, mode, concurrency, p50Ms: round2(latency.p50), p95Ms: round2(latency.p95), requestsPerSecond: round2(sample.latencies.length / sample.seconds) });
          log(`[scale ${size}] ${arm.name} ${mode} c=${concurrency}: p50 ${latency.p50.toFixed(2)} ms, p95 ${latency.p95.toFixed(2)} ms`);
        }
      }
    }
    for (const arm of arms) arm.result.diskMiB = round2((await arm.backend.diskBytes()) / 2 ** 20);
    const hybridOverBm25 = arms.flatMap((arm) =>
      options.concurrency.flatMap((concurrency) => {
        const cell = (mode: RetrievalMode) => cells.find((c) => c.arm === arm.name && c.mode === mode && c.concurrency === concurrency);
        const [h, b] = [cell("hybrid"), cell("bm25")];
        return h && b ? [{ arm: arm.name, concurrency, p50: ratio(h.p50Ms, b.p50Ms) }] : [];
      }),
    );
    return { chunks: size, arms: arms.map((a) => a.result), cells, hybridOverBm25, processRssMiB: Math.round(process.memoryUsage.rss() / 2 ** 20), loadAverage: loadAverageNow() };
  } finally {
    for (const arm of arms) {
      await arm.exact?.close();
      await arm.backend.close();
    }
  }
}

async function startArm(name: ScaleArmName, size: number, options: ScaleBenchOptions, pools: SentencePools, stub: OpenAiStub, log: (line: string) => void): Promise<Arm> {
  globalThis.gc?.();
  const rssBefore = process.memoryUsage.rss();
  const backendName: BackendName = name === "opensearch" ? "opensearch" : "embedded";
  const backend = await startBenchBackend({
    backend: backendName,
    opensearchUrl: options.opensearchUrl,
    env: {
      QUARRY_EMBEDDING_PROVIDER: "openai",
      QUARRY_EMBEDDING_BASE_URL: stub.url,
      QUARRY_EMBEDDING_MODEL: "stub-hashing",
      QUARRY_EMBEDDING_DIMENSION: String(DIMENSION),
      QUARRY_VECTOR_INDEX: name === "embedded-exact" ? "exact" : "hnsw",
      ...(options.exactBelow === undefined ? {} : { QUARRY_VECTOR_INDEX_EXACT_BELOW: String(options.exactBelow) }),
    },
  });
  try {
    const { knowledgeBase } = await backend.client.createKnowledgeBase({ name: `scale-${size}` });
    const knowledgeBaseId = knowledgeBase!.id;
    log(`[scale ${size}] ${name}: loading`);
    const started = performance.now();
    let reported = 0;
    await loadIntoEngine(backend.engine, generateSyntheticChunks(pools, { chunks: size, seed: options.seed, dimension: DIMENSION }), {
      knowledgeBaseId,
      // OpenSearch refreshes once per document write: larger synthetic documents keep loading quick.
      chunksPerDocument: backendName === "opensearch" ? 1000 : 100,
      onProgress: (loaded) => {
        if (loaded - reported >= 50_000) log(`[scale ${size}] ${name}: ${(reported = loaded)} loaded`);
      },
    });
    const loadSeconds = (performance.now() - started) / 1000;
    const probe = generateSyntheticChunks(pools, { chunks: 1, seed: options.seed + 1, dimension: DIMENSION }).next().value!.vector;
    const firstDense = performance.now();
    await backend.engine.search(denseQuery(knowledgeBaseId, probe, "vector"));
    const firstDenseSearchSeconds = (performance.now() - firstDense) / 1000;
    // Loading and a first build block this thread (the Quarry's too) for long on a loaded machine; its
    // HTTP server then closes the client's idle keep-alive socket, and a request sent on it at that
    // moment meets ECONNRESET. A pause lets the server's overdue timers run first.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const firstRpc = performance.now();
    await backend.client.search({ query: "first search", knowledgeBases: [knowledgeBaseId], settings: { mode: modeToProto("hybrid"), topK: 10 } });
    const firstRpcSeconds = (performance.now() - firstRpc) / 1000;
    const exact =
      name === "embedded-hnsw"
        ? (() => {
            const env = { QUARRY_DATA_DIR: backend.dataDir, QUARRY_VECTOR_INDEX: "exact" };
            const config = indexConfig(env);
            // A reader on a read-only connection: a second writer with the index off would forget the
            // saved indexes (approximate-knn.ts), and the service's read threads, which only load
            // saves, would then scan exactly too: the arm would measure the exact scan twice.
            return new SqliteSearchEngine(openReadOnlyDatabase(sqlitePath(env)), { ownsDatabase: true, role: "reader", vectorIndex: config.backend === "sqlite" ? config.vectorIndex : undefined });
          })()
        : undefined;
    log(`[scale ${size}] ${name}: loaded in ${loadSeconds.toFixed(1)} s, first dense search ${firstDenseSearchSeconds.toFixed(1)} s, first RPC ${firstRpcSeconds.toFixed(1)} s`);
    return {
      name,
      backend,
      knowledgeBaseId,
      exact,
      result: {
        arm: name,
        loadSeconds: round2(loadSeconds),
        loadChunksPerSecond: Math.round(size / loadSeconds),
        firstDenseSearchSeconds: round2(firstDenseSearchSeconds),
        firstRpcSeconds: round2(firstRpcSeconds),
        rssDeltaMiB: Math.round((process.memoryUsage.rss() - rssBefore) / 2 ** 20),
        diskMiB: 0,
      },
    };
  } catch (error) {
    await backend.close();
    throw error;
  }
}

/** Recall of the approximate dense list, and overlap of the hybrid list, against the exact scan on the same file. */
async function measureRecall(arm: Arm, size: number, options: ScaleBenchOptions, pools: SentencePools, queries: BenchQuery[]): Promise<void> {
  // The generator's next chunks after the corpus: drawn like it, but not in the store.
  const vectors: Float32Array[] = [];
  let i = 0;
  for (const chunk of generateSyntheticChunks(pools, { chunks: size + options.recallQueries, seed: options.seed, dimension: DIMENSION })) {
    if (i++ >= size) vectors.push(chunk.vector);
  }
  let dense = 0;
  let hybrid = 0;
  let denseTotal = 0;
  let hybridTotal = 0;
  for (const [q, vector] of vectors.entries()) {
    const text = queries[q % queries.length].text;
    for (const mode of ["vector", "hybrid"] as const) {
      const query = { ...denseQuery(arm.knowledgeBaseId, vector, mode), text };
      const truth = (await arm.exact!.search(query)).map((h) => h.chunk.id);
      const got = new Set((await arm.backend.engine.search(query)).map((h) => h.chunk.id));
      const found = truth.filter((id) => got.has(id)).length;
      if (mode === "vector") [dense, denseTotal] = [dense + found, denseTotal + truth.length];
      else [hybrid, hybridTotal] = [hybrid + found, hybridTotal + truth.length];
    }
  }
  arm.result.denseRecallAt10 = Math.round((dense / Math.max(1, denseTotal)) * 10_000) / 10_000;
  arm.result.hybridOverlapAt10 = Math.round((hybrid / Math.max(1, hybridTotal)) * 10_000) / 10_000;
}

function denseQuery(knowledgeBaseId: string, vector: Float32Array, mode: RetrievalMode): SearchQuery {
  return { knowledgeBaseIds: [knowledgeBaseId], text: "", vector, mode, topK: 10, minScore: 0, documentIds: [], weights: mode === "hybrid" ? { bm25: 1, vector: 1 } : undefined };
}

export function formatScaleReport(report: ScaleBenchReport): string {
  const lines = [`## bench scale: ${report.settings.arms.join(", ")}; stub embedder (hashing vectors over HTTP)`, "", machineLine(report.machine), ""];
  for (const size of report.sizes) {
    lines.push(`### ${size.chunks.toLocaleString("en")} chunks (load average at the end ${size.loadAverage.map((l) => l.toFixed(1)).join(" ")}, process RSS ${size.processRssMiB} MiB)`, "");
    lines.push("| arm | load chunks/s | first dense search s | first RPC s | RSS Δ MiB | disk MiB | dense recall@10 | hybrid overlap@10 |", "|---|---|---|---|---|---|---|---|");
    for (const a of size.arms) {
      lines.push(`| ${a.arm} | ${a.loadChunksPerSecond} | ${a.firstDenseSearchSeconds} | ${a.firstRpcSeconds} | ${a.rssDeltaMiB} | ${a.diskMiB} | ${a.denseRecallAt10?.toFixed(4) ?? "—"} | ${a.hybridOverlapAt10?.toFixed(4) ?? "—"} |`);
    }
    const concurrency = report.settings.concurrency;
    lines.push("", `| arm | mode | ${concurrency.map((c) => `c=${c} p50 / p95 ms (req/s)`).join(" | ")} |`, `|---|---|${concurrency.map(() => "---").join("|")}|`);
    for (const arm of size.arms) {
      for (const mode of report.settings.modes) {
        const row = concurrency.map((c) => {
          const cell = size.cells.find((x) => x.arm === arm.arm && x.mode === mode && x.concurrency === c);
          return cell ? `${cell.p50Ms} / ${cell.p95Ms} (${cell.requestsPerSecond})` : "";
        });
        lines.push(`| ${arm.arm} | ${mode} | ${row.join(" | ")} |`);
      }
    }
    if (size.hybridOverBm25.length > 0) {
      lines.push("", `| hybrid ÷ BM25 (RPC p50) | ${concurrency.map((c) => `c=${c}`).join(" | ")} |`, `|---|${concurrency.map(() => "---").join("|")}|`);
      for (const arm of size.arms) {
        lines.push(`| ${arm.arm} | ${concurrency.map((c) => size.hybridOverBm25.find((h) => h.arm === arm.arm && h.concurrency === c)?.p50 ?? "").join(" | ")} |`);
      }
    }
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}

/** p50 at the lowest concurrency against corpus size: one line per arm and mode. */
export function scaleCurveSvg(report: ScaleBenchReport): string {
  const lowest = Math.min(...report.settings.concurrency);
  const series = report.settings.arms.flatMap((arm) =>
    report.settings.modes.map((mode) => ({
      name: `${arm} ${mode}`,
      points: report.sizes.flatMap((s) => {
        const cell = s.cells.find((c) => c.arm === arm && c.mode === mode && c.concurrency === lowest);
        return cell ? [{ x: s.chunks, y: cell.p50Ms }] : [];
      }),
    })),
  );
  return lineChartSvg({ title: `Search RPC p50 at concurrency ${lowest} vs corpus size (stub embedder)`, xLabel: "chunks (log scale)", yLabel: "p50 latency, ms", logX: true, series });
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
