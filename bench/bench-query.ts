// bench query: Search RPC latency against the engine's own raw query for the same queries, at each
// concurrency, on a synthetic corpus loaded straight into the store (synthetic-corpus.ts says how).
// Three columns per cell, measured side by side and interleaved in rounds so drift in the shared
// machine's load hits all of them alike:
//   rpc    — the gateway's Search RPC over HTTP (gateway → answer → embed the query → index → engine);
//   engine — the SearchEngine called in-process with a precomputed query vector (validation, fusion, mapping);
//   raw    — only the statements the engine sends to SQLite / OpenSearch.
// The query embedding (MiniLM, one text) is timed on its own, since the RPC pays it for hybrid and raw cannot.
import { MIN_KNOWN_TOKEN_SHARE } from "../services/answer/index.ts";
import type { Embedder } from "../services/embedder/index.ts";
import type { RetrievalMode, SearchQuery } from "../lib/domain.ts";
import { modeToProto } from "../lib/proto-convert.ts";
import { startBenchBackend, type BackendName, type BenchBackend, type RawQuery } from "./bench-backend.ts";
import { runClosedLoop } from "./load-runner.ts";
import { describeMachine, loadAverageNow, type MachineInfo } from "./machine.ts";
import { ratio, summarize, type LatencySummary } from "./percentiles.ts";
import { generateSyntheticChunks, loadBenchQueries, loadIntoEngine, loadSentencePools, type BenchQuery } from "./synthetic-corpus.ts";

export interface QueryBenchOptions {
  backend: BackendName;
  opensearchUrl?: string;
  /** Corpus sizes in chunks; each gets a fresh Quarry and store. */
  sizes: number[];
  concurrency: number[];
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
  rpc: LatencySummary;
  engine: LatencySummary;
  raw: LatencySummary;
  /** rpc p50 / raw p50: the goal is ≤ 1.2. */
  rpcOverRawP50: number;
  /** rpc p50 / (raw p50 + query embedding p50): what Quarry adds besides the model, for modes that embed. */
  rpcOverRawPlusEmbedP50: number;
  engineOverRawP50: number;
}

export interface HybridOverBm25 {
  concurrency: number;
  /** hybrid RPC p50 / bm25 RPC p50: the goal is ≤ 1.1. */
  rpcP50: number;
  /** The same ratio for the raw queries: what the engine itself costs for the second list. */
  rawP50: number;
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
  for (const size of options.sizes) {
    const backend = await startBenchBackend({ backend: options.backend, opensearchUrl: options.opensearchUrl });
    try {
      rawBaseline = backend.rawDescription;
      sizes.push(await benchOneSize(backend, size, options, queries, vectors, pools, log, embedQuery));
    } finally {
      await backend.close();
    }
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
  log(`[${backend.name} ${size}] loading ${size} synthetic chunks`);
  const loadStarted = performance.now();
  let reported = 0;
  await loadIntoEngine(backend.engine, generateSyntheticChunks(pools, { chunks: size, seed: options.seed, dimension }), {
    knowledgeBaseId: kb.id,
    // OpenSearch refreshes once per document write: larger synthetic documents keep loading quick.
    chunksPerDocument: backend.name === "opensearch" ? 1000 : 100,
    onProgress: (loaded) => {
      if (loaded - reported >= 20_000) log(`[${backend.name} ${size}] ${(reported = loaded)} loaded`);
    },
  });
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  log(`[${backend.name} ${size}] loaded in ${loadSeconds.toFixed(1)} s`);

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
    for (let i = 0; i < queries.length; i++) raws.push(await backend.prepareRaw(searchQuery(i, mode)));
    for (const concurrency of options.concurrency) {
      const columns = {
        rpc: (n: number) => rpc(n % queries.length, mode),
        engine: (n: number) => backend.engine.search(searchQuery(n % queries.length, mode)),
        raw: (n: number) => raws[n % queries.length](),
      };
      const samples: Record<keyof typeof columns, number[]> = { rpc: [], engine: [], raw: [] };
      for (const send of Object.values(columns)) await runClosedLoop(send, { concurrency, requests: Math.min(WARMUP, options.requests) });
      const perRound = Math.ceil(options.requests / ROUNDS);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, send] of Object.entries(columns) as [keyof typeof columns, (n: number) => unknown][]) {
          const offset = round * perRound;
          samples[name].push(...(await runClosedLoop((n) => send(n + offset), { concurrency, requests: perRound })));
        }
      }
      const [r, e, w] = [summarize(samples.rpc), summarize(samples.engine), summarize(samples.raw)];
      const embedsQuery = mode !== "bm25";
      cells.push({
        mode,
        concurrency,
        rpc: r,
        engine: e,
        raw: w,
        rpcOverRawP50: ratio(r.p50, w.p50),
        rpcOverRawPlusEmbedP50: ratio(r.p50, w.p50 + (embedsQuery ? embedQuery.p50 : 0)),
        engineOverRawP50: ratio(e.p50, w.p50),
      });
      log(`[${backend.name} ${size}] ${mode} c=${concurrency}: rpc p50 ${r.p50.toFixed(2)} ms, engine ${e.p50.toFixed(2)} ms, raw ${w.p50.toFixed(2)} ms`);
    }
  }
  const hybridOverBm25: HybridOverBm25[] = [];
  for (const concurrency of options.concurrency) {
    const h = cells.find((c) => c.mode === "hybrid" && c.concurrency === concurrency);
    const b = cells.find((c) => c.mode === "bm25" && c.concurrency === concurrency);
    if (h && b) hybridOverBm25.push({ concurrency, rpcP50: ratio(h.rpc.p50, b.rpc.p50), rawP50: ratio(h.raw.p50, b.raw.p50) });
  }
  return { chunks: size, loadSeconds: Math.round(loadSeconds * 10) / 10, embedQuery, rpcEngineAgreement: agreeing / checked, cells, hybridOverBm25 };
}
