// bench query: Search RPC latency against the engine's own raw query for the same queries, at each
// concurrency, on a synthetic corpus loaded straight into the store (synthetic-corpus.ts says how).
// Three columns per cell, measured side by side and interleaved in rounds so drift in the shared
// machine's load hits all of them alike:
//   rpc    — the gateway's Search RPC over HTTP (gateway → answer → embed the query → index → engine);
//   engine — the SearchEngine called in-process with a precomputed query vector (validation, fusion, mapping);
//   raw    — only the statements the engine sends to SQLite / OpenSearch (embedded: on the bench's
//            own connection on the main thread);
//   raw on threads — embedded, with the index's reads on N threads: the same statements on a pool of
//            N threads of the bench's own (raw-sql-threads.ts), the raw query at its best on the cores.
// Embedded runs once per --read-threads setting (QUARRY_INDEX_READ_THREADS; 0 is the single-threaded
// read path as before), each on a fresh Quarry, so both paths are measured in the same run; each
// cell also counts throughput (requests ÷ wall time of the closed loop).
// The query embedding (MiniLM, one text) is timed on its own, since the RPC pays it for hybrid and raw cannot.
import { MIN_KNOWN_TOKEN_SHARE } from "../services/answer/index.ts";
import type { Embedder } from "../services/embedder/index.ts";
import type { RetrievalMode, SearchQuery } from "../lib/domain.ts";
import { modeToProto } from "../lib/proto-convert.ts";
import { startBenchBackend, type BackendName, type BenchBackend, type RawQuery } from "./bench-backend.ts";
import { runClosedLoop } from "./load-runner.ts";
import { DEFAULT_READ_THREADS } from "../services/index/index.ts";
import { describeMachine, loadAverageNow, type MachineInfo } from "./machine.ts";
import { ratio, summarize, type LatencySummary } from "./percentiles.ts";
import { generateSyntheticChunks, loadBenchQueries, loadIntoEngine, loadSentencePools, type BenchQuery } from "./synthetic-corpus.ts";

export interface QueryBenchOptions {
  backend: BackendName;
  opensearchUrl?: string;
  /** Corpus sizes in chunks; each gets a fresh Quarry and store. */
  sizes: number[];
  concurrency: number[];
  /** Embedded: the index's read threads to measure, one fresh Quarry each (0: reads on the main thread); the default's alone unless set. */
  readThreads?: number[];
  /** Requests per column and cell. */
  requests: number;
  modes: RetrievalMode[];
  /** Distinct queries cycled through. */
  queries: number;
  seed: number;
  evalDir: string;
  topK: number;
  embedder: Embedder;
  progress?(line: string): void;
}

export interface QueryCell {
  mode: RetrievalMode;
  concurrency: number;
  /** The index's read threads (embedded; 0 for OpenSearch and for reads on the main thread). */
  readThreads: number;
  rpc: LatencySummary;
  engine: LatencySummary;
  raw: LatencySummary;
  /** The raw statements on readThreads threads of the bench's own (embedded with readThreads > 0). */
  rawOnThreads?: LatencySummary;
  /** Requests per second of each column's closed loop. */
  throughput: { rpc: number; raw: number; rawOnThreads?: number };
  /** rpc p50 / raw-on-threads p50, where measured: the raw query at the same concurrency on as many threads. */
  rpcOverRawOnThreadsP50?: number;
  /** rpc p50 / raw p50: the goal is ≤ 1.2. */
  rpcOverRawP50: number;
  /** rpc p50 / (raw p50 + query embedding p50): what Quarry adds besides the model, for modes that embed. */
  rpcOverRawPlusEmbedP50: number;
  engineOverRawP50: number;
}

export interface HybridOverBm25 {
  readThreads: number;
  concurrency: number;
  /** hybrid RPC p50 / bm25 RPC p50: the goal is ≤ 1.1. */
  rpcP50: number;
  /** The same ratio for the raw queries: what the engine itself costs for the second list. */
  rawP50: number;
}

/** Throughput at the highest concurrency ÷ at concurrency 1, per mode and read-thread setting (goal ≥ 1.7: both cores used). */
export interface ThroughputScaling {
  mode: RetrievalMode;
  readThreads: number;
  concurrency: number;
  rpc: number;
  raw: number;
  rawOnThreads?: number;
}

export interface QuerySizeResult {
  chunks: number;
  loadSeconds: number;
  /** One query text through the local model, concurrency 1. */
  embedQuery: LatencySummary;
  /** Share of checked queries whose RPC top-k ids equal the engine's (same model, same vector). */
  rpcEngineAgreement: number;
  cells: QueryCell[];
  hybridOverBm25: HybridOverBm25[];
  scaling: ThroughputScaling[];
}

export interface QueryBenchReport {
  bench: "query";
  backend: BackendName;
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  settings: Omit<QueryBenchOptions, "embedder" | "progress" | "opensearchUrl">;
  rawBaseline: string;
  corpus: string;
  sizes: QuerySizeResult[];
}

const WARMUP = 20;
const ROUNDS = 2;

export async function runQueryBench(options: QueryBenchOptions): Promise<QueryBenchReport> {
  const machine = describeMachine();
  const log = options.progress ?? (() => {});
  const pools = loadSentencePools(options.evalDir);
  const queries = loadBenchQueries(options.evalDir, options.queries, options.seed);
  const vectors = await options.embedder.embed(queries.map((q) => q.text), "query");
  const embedQuery = summarize(await runClosedLoop((i) => options.embedder.embed([queries[i % queries.length].text], "query"), { concurrency: 1, requests: Math.min(options.requests, 100) }));
  const sizes: QuerySizeResult[] = [];
  let rawBaseline = "";
  const settings = options.backend === "embedded" ? (options.readThreads ?? [DEFAULT_READ_THREADS]) : [0];
  for (const size of options.sizes) {
    const results: QuerySizeResult[] = [];
    for (const readThreads of settings) {
      const backend = await startBenchBackend({
        backend: options.backend,
        opensearchUrl: options.opensearchUrl,
        env: options.backend === "embedded" ? { QUARRY_INDEX_READ_THREADS: String(readThreads) } : undefined,
        rawThreads: options.backend === "embedded" ? readThreads : 0,
      });
      try {
        rawBaseline = backend.rawDescription;
        results.push(await benchOneSize(backend, size, readThreads, options, queries, vectors, pools, log, embedQuery));
      } finally {
        await backend.close();
      }
    }
    sizes.push({ ...results[0], cells: results.flatMap((r) => r.cells), hybridOverBm25: results.flatMap((r) => r.hybridOverBm25), scaling: results.flatMap((r) => r.scaling) });
  }
  return {
    bench: "query",
    backend: options.backend,
    machine,
    loadAverageEnd: loadAverageNow(),
    settings: {
      backend: options.backend,
      sizes: options.sizes,
      concurrency: options.concurrency,
      readThreads: settings,
      requests: options.requests,
      modes: options.modes,
      queries: options.queries,
      seed: options.seed,
      evalDir: options.evalDir,
      topK: options.topK,
    },
    rawBaseline,
    corpus:
      "synthetic: real SciFact sentences and cMedIR titles recombined per topic cluster (64 clusters, 20% Chinese chunks); " +
      "vectors normalize(√0.5·centroid + √0.5·random unit), 384 dims; queries: real SciFact claims and cMedIR searches, embedded by the local model",
    sizes,
  };
}

async function benchOneSize(
  backend: BenchBackend,
  size: number,
  readThreads: number,
  options: QueryBenchOptions,
  queries: BenchQuery[],
  vectors: Float32Array[],
  pools: ReturnType<typeof loadSentencePools>,
  log: (line: string) => void,
  embedQuery: LatencySummary,
): Promise<QuerySizeResult> {
  const { knowledgeBase } = await backend.client.createKnowledgeBase({ name: `bench-${size}` });
  const kb = knowledgeBase!;
  const dimension = kb.embeddingDimension;
  const tag = `[${backend.name} ${size}${backend.name === "embedded" ? `, ${readThreads} read threads` : ""}]`;
  log(`${tag} loading ${size} synthetic chunks`);
  const loadStarted = performance.now();
  let reported = 0;
  await loadIntoEngine(backend.engine, generateSyntheticChunks(pools, { chunks: size, seed: options.seed, dimension }), {
    knowledgeBaseId: kb.id,
    // OpenSearch refreshes once per document write: larger synthetic documents keep loading quick.
    chunksPerDocument: backend.name === "opensearch" ? 1000 : 100,
    onProgress: (loaded) => {
      if (loaded - reported >= 20_000) log(`${tag} ${(reported = loaded)} loaded`);
    },
  });
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  log(`${tag} loaded in ${loadSeconds.toFixed(1)} s`);
  // The load blocks this thread, which the in-process Quarry shares, for a minute at 100k: its HTTP
  // server then closes the client's idle keep-alive socket, and a request sent on it at that moment
  // meets ECONNRESET (as bench-scale.ts found). A pause lets the server's overdue timers run first.
  await new Promise((resolve) => setTimeout(resolve, 1000));

  const searchQuery = (i: number, mode: RetrievalMode): SearchQuery => ({
    knowledgeBaseIds: [kb.id],
    text: queries[i].text,
    vector: mode === "bm25" ? undefined : vectors[i],
    mode,
    topK: options.topK,
    minScore: 0,
    documentIds: [],
    // The same gate the answer service applies: a query the embedder cannot read fuses without its vector list.
    weights: mode === "hybrid" ? { bm25: 1, vector: options.embedder.knownTokenShare(queries[i].text) < MIN_KNOWN_TOKEN_SHARE ? 0 : 1 } : undefined,
  });
  const rpc = (i: number, mode: RetrievalMode) =>
    backend.client.search({ query: queries[i].text, knowledgeBases: [kb.id], settings: { mode: modeToProto(mode), topK: options.topK } });

  // The RPC embeds the query itself with the same model; it must find what the engine finds for that vector.
  const checked = Math.min(10, queries.length);
  let agreeing = 0;
  for (let i = 0; i < checked; i++) {
    const mode = options.modes.includes("hybrid") ? "hybrid" : options.modes[0];
    const viaRpc = (await rpc(i, mode)).hits.map((h) => h.chunk?.id);
    const direct = (await backend.engine.search(searchQuery(i, mode))).map((h) => h.chunk.id);
    if (JSON.stringify(viaRpc) === JSON.stringify(direct)) agreeing++;
  }

  const cells: QueryCell[] = [];
  for (const mode of options.modes) {
    const raws: RawQuery[] = [];
    const threadRaws: RawQuery[] = [];
    for (let i = 0; i < queries.length; i++) {
      raws.push(await backend.prepareRaw(searchQuery(i, mode)));
      if (backend.prepareRawOnThreads) threadRaws.push(await backend.prepareRawOnThreads(searchQuery(i, mode)));
    }
    for (const concurrency of options.concurrency) {
      type Column = "rpc" | "engine" | "raw" | "rawOnThreads";
      const columns: Partial<Record<Column, (n: number) => unknown>> = {
        rpc: (n: number) => rpc(n % queries.length, mode),
        engine: (n: number) => backend.engine.search(searchQuery(n % queries.length, mode)),
        raw: (n: number) => raws[n % queries.length](),
        ...(threadRaws.length > 0 ? { rawOnThreads: (n: number) => threadRaws[n % queries.length]() } : {}),
      };
      const samples: Record<Column, number[]> = { rpc: [], engine: [], raw: [], rawOnThreads: [] };
      const wallMs: Record<Column, number> = { rpc: 0, engine: 0, raw: 0, rawOnThreads: 0 };
      for (const send of Object.values(columns)) await runClosedLoop(send, { concurrency, requests: Math.min(WARMUP, options.requests) });
      const perRound = Math.ceil(options.requests / ROUNDS);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, send] of Object.entries(columns) as [Column, (n: number) => unknown][]) {
          const offset = round * perRound;
          const started = performance.now();
          samples[name].push(...(await runClosedLoop((n) => send(n + offset), { concurrency, requests: perRound })));
          wallMs[name] += performance.now() - started;
        }
      }
      const [r, e, w] = [summarize(samples.rpc), summarize(samples.engine), summarize(samples.raw)];
      const t = samples.rawOnThreads.length > 0 ? summarize(samples.rawOnThreads) : undefined;
      const perSecond = (name: Column) => Math.round((samples[name].length / wallMs[name]) * 1000 * 10) / 10;
      const embedsQuery = mode !== "bm25";
      cells.push({
        mode,
        concurrency,
        readThreads,
        rpc: r,
        engine: e,
        raw: w,
        ...(t ? { rawOnThreads: t, rpcOverRawOnThreadsP50: ratio(r.p50, t.p50) } : {}),
        throughput: { rpc: perSecond("rpc"), raw: perSecond("raw"), ...(t ? { rawOnThreads: perSecond("rawOnThreads") } : {}) },
        rpcOverRawP50: ratio(r.p50, w.p50),
        rpcOverRawPlusEmbedP50: ratio(r.p50, w.p50 + (embedsQuery ? embedQuery.p50 : 0)),
        engineOverRawP50: ratio(e.p50, w.p50),
      });
      log(`${tag} ${mode} c=${concurrency}: rpc p50 ${r.p50.toFixed(2)} ms, engine ${e.p50.toFixed(2)} ms, raw ${w.p50.toFixed(2)} ms${t ? `, raw on threads ${t.p50.toFixed(2)} ms` : ""}`);
    }
  }
  const hybridOverBm25: HybridOverBm25[] = [];
  for (const concurrency of options.concurrency) {
    const h = cells.find((c) => c.mode === "hybrid" && c.concurrency === concurrency);
    const b = cells.find((c) => c.mode === "bm25" && c.concurrency === concurrency);
    if (h && b) hybridOverBm25.push({ readThreads, concurrency, rpcP50: ratio(h.rpc.p50, b.rpc.p50), rawP50: ratio(h.raw.p50, b.raw.p50) });
  }
  const scaling: ThroughputScaling[] = [];
  const top = Math.max(...options.concurrency);
  for (const mode of options.modes) {
    const one = cells.find((c) => c.mode === mode && c.concurrency === 1);
    const most = cells.find((c) => c.mode === mode && c.concurrency === top);
    if (!one || !most || top === 1) continue;
    scaling.push({
      mode,
      readThreads,
      concurrency: top,
      rpc: ratio(most.throughput.rpc, one.throughput.rpc),
      raw: ratio(most.throughput.raw, one.throughput.raw),
      ...(most.throughput.rawOnThreads && one.throughput.rawOnThreads ? { rawOnThreads: ratio(most.throughput.rawOnThreads, one.throughput.rawOnThreads) } : {}),
    });
  }
  return { chunks: size, loadSeconds: Math.round(loadSeconds * 10) / 10, embedQuery, rpcEngineAgreement: agreeing / checked, cells, hybridOverBm25, scaling };
}
