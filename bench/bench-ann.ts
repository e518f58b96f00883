// `quarry bench ann`: the approximate kNN candidates for the embedded store, side by side in one run
// on the same vectors: recall@k against sqlite-vec's exact scan (what the store ran before), query
// p50/p95, build time, memory and file size, and whether the index saves, loads and memory-maps.
// The vectors are synthetic and normalised, drawn around topic centres so neighbourhoods exist as in
// real embeddings (uniform random 384-d vectors have none, and every index scores badly on them).
// `--vectors scale-corpus` draws them as `quarry bench scale` does instead (64 topics, each vector
// half its topic's centre and half noise: no neighbourhood finer than the topic), and `--expansions`
// searches the one usearch build at several search expansions, which is how recall at a size is told
// apart from recall of a distribution.
// usearch is a dependency; hnswlib-node and @lancedb/lancedb are measured when installed beside it
// (npm i --no-save hnswlib-node@3.0.0 @lancedb/lancedb@0.31.0), and reported as absent otherwise.
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { directoryBytes } from "./directory-size.ts";
import { describeMachine, machineLine, type MachineInfo } from "./machine.ts";
import { summarize } from "./percentiles.ts";
import { generateSyntheticChunks, seededRandom } from "./synthetic-corpus.ts";
import { HNSW_PARAMETERS } from "../services/index/lab.ts";

export interface AnnBenchOptions {
  size: number;
  dimension: number;
  queries: number;
  k: number;
  seed: number;
  /** Which candidates besides the exact scan (the truth, always run): names starting with these. */
  only?: string[];
  /** How the vectors are drawn: around size / 100 tight centres, or as the scale bench's corpus. */
  vectors?: VectorDistribution;
  /** usearch searched again at each of these search expansions (the build is the store's). */
  expansions?: number[];
  /** scale-corpus only: the topics the vectors are drawn around (64, as bench scale draws them). */
  topics?: number;
  progress: (line: string) => void;
}

export interface AnnCandidateResult {
  name: string;
  /** Why the candidate was not measured (not installed, failed), or undefined when it was. */
  skipped?: string;
  buildMs?: number;
  recallAtK?: number;
  p50Ms?: number;
  p95Ms?: number;
  rssDeltaMiB?: number;
  fileMiB?: number;
  persistence: string;
}

export interface AnnBenchReport {
  bench: "ann";
  backend: "embedded";
  machine: MachineInfo;
  options: Omit<AnnBenchOptions, "progress">;
  candidates: AnnCandidateResult[];
}

export type VectorDistribution = "clustered" | "scale-corpus";

/** What each candidate does with the vectors; ids are the vectors' positions. */
interface AnnCandidate {
  name: string;
  persistence: string;
  build(vectors: Float32Array, count: number, dimension: number, dir: string): Promise<void>;
  search(query: Float32Array, k: number): Promise<number[]>;
  /** Writes the index under dir (if it does not live there already). */
  save(dir: string): Promise<void>;
  /** The same saved index searched at another expansion (usearch only). */
  atExpansion?(dir: string, expansion: number): { name: string; search(query: Float32Array, k: number): number[] };
  close(): void;
}

export async function runAnnBench(options: AnnBenchOptions): Promise<AnnBenchReport> {
  const { size, dimension, queries, k, seed, progress } = options;
  const distribution = options.vectors ?? "clustered";
  progress(`generating ${size} + ${queries} normalised ${dimension}-d vectors (${distribution})`);
  const { vectors, queryVectors } = distribution === "clustered" ? clusteredVectors(size, queries, dimension, seed) : scaleCorpusVectors(size, queries, dimension, seed, options.topics);
  const exact = sqliteVecCandidate();
  const candidates: AnnCandidate[] = [exact];
  for (const load of [usearchCandidate, hnswlibCandidate, lancedbCandidate]) {
    const candidate = await load();
    if (typeof candidate === "string") continue;
    if (options.only && !options.only.some((prefix) => candidate.name.toLowerCase().startsWith(prefix.toLowerCase()))) continue;
    candidates.push(candidate);
  }
  const results: AnnCandidateResult[] = [];
  let truth: number[][] = [];
  for (const candidate of candidates) {
    const dir = await mkdtemp(join(tmpdir(), "quarry-bench-ann-"));
    try {
      progress(`${candidate.name}: building over ${size} vectors`);
      globalThis.gc?.();
      const rssBefore = process.memoryUsage.rss();
      const started = performance.now();
      await candidate.build(vectors, size, dimension, dir);
      const buildMs = performance.now() - started;
      const rssDeltaMiB = (process.memoryUsage.rss() - rssBefore) / 2 ** 20;
      const timings: number[] = [];
      const answers: number[][] = [];
      for (let q = 0; q < queries; q++) {
        const query = queryVectors.subarray(q * dimension, (q + 1) * dimension);
        const t = performance.now();
        answers.push(await candidate.search(query, k));
        timings.push(performance.now() - t);
      }
      if (candidate === exact) truth = answers;
      await candidate.save(dir);
      for (const expansion of candidate.atExpansion ? (options.expansions ?? []) : []) {
        const viewed = candidate.atExpansion!(dir, expansion);
        const times: number[] = [];
        const found: number[][] = [];
        for (let q = 0; q < queries; q++) {
          const t = performance.now();
          found.push(viewed.search(queryVectors.subarray(q * dimension, (q + 1) * dimension), k));
          times.push(performance.now() - t);
        }
        const at = summarize(times);
        progress(`${viewed.name}: recall ${recall(found, truth)}, p50 ${round(at.p50)} ms`);
        results.push({ name: viewed.name, persistence: "the build above, viewed (mmap)", recallAtK: recall(found, truth), p50Ms: round(at.p50), p95Ms: round(at.p95) });
      }
      const latency = summarize(timings);
      progress(`${candidate.name}: recall ${recall(answers, truth)}, p50 ${round(latency.p50)} ms, p95 ${round(latency.p95)} ms, build ${Math.round(buildMs)} ms`);
      results.push({
        name: candidate.name,
        persistence: candidate.persistence,
        buildMs: Math.round(buildMs),
        recallAtK: recall(answers, truth),
        p50Ms: round(latency.p50),
        p95Ms: round(latency.p95),
        rssDeltaMiB: Math.round(rssDeltaMiB),
        fileMiB: Math.round((await directoryBytes(dir)) / 2 ** 20),
      });
    } catch (error) {
      results.push({ name: candidate.name, persistence: candidate.persistence, skipped: `failed: ${(error as Error).message}` });
    } finally {
      candidate.close();
      await rm(dir, { recursive: true, force: true });
    }
  }
  for (const [name, load] of [["hnswlib-node 3.0.0", hnswlibCandidate], ["@lancedb/lancedb 0.31.0", lancedbCandidate]] as const) {
    const loaded = await load();
    if (typeof loaded === "string" && !options.only) results.push({ name, persistence: "", skipped: loaded });
  }
  return {
    bench: "ann",
    backend: "embedded",
    machine: describeMachine(),
    options: { size, dimension, queries, k, seed, only: options.only, vectors: distribution, expansions: options.expansions, topics: distribution === "scale-corpus" ? (options.topics ?? SCALE_TOPICS) : undefined },
    candidates: results,
  };
}

export function formatAnnReport(report: AnnBenchReport): string {
  const { size, dimension, queries, k } = report.options;
  const lines = [
    `## bench ann: ${size} × ${dimension}-d (${report.options.vectors ?? "clustered"}${report.options.topics ? `, ${report.options.topics} topics` : ""}), ${queries} queries, recall@${k} against the exact scan`,
    "",
    machineLine(report.machine),
    "",
    `| index | recall@${k} | p50 ms | p95 ms | build s | RSS Δ MiB | file MiB | save / load / mmap |`,
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const c of report.candidates) {
    if (c.skipped) lines.push(`| ${c.name} | ${c.skipped} | | | | | | |`);
    else if (c.buildMs === undefined) lines.push(`| ${c.name} | ${c.recallAtK?.toFixed(4)} | ${c.p50Ms} | ${c.p95Ms} | | | | ${c.persistence} |`);
    else lines.push(`| ${c.name} | ${c.recallAtK?.toFixed(4)} | ${c.p50Ms} | ${c.p95Ms} | ${(c.buildMs / 1000).toFixed(1)} | ${c.rssDeltaMiB} | ${c.fileMiB} | ${c.persistence} |`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Vectors around `size / 100` topic centres (a centre plus Gaussian noise of about its own length,
 * normalised); the queries are drawn the same way, so they have near neighbours but are not copies.
 */
export function clusteredVectors(size: number, queries: number, dimension: number, seed: number): { vectors: Float32Array; queryVectors: Float32Array } {
  const random = seededRandom(seed);
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const centres = Math.max(1, Math.round(size / 100));
  const centre = new Float32Array(centres * dimension).map(gaussian);
  const draw = (count: number) => {
    const out = new Float32Array(count * dimension);
    for (let i = 0; i < count; i++) {
      const c = Math.floor(random() * centres);
      let norm = 0;
      for (let d = 0; d < dimension; d++) {
        const value = centre[c * dimension + d] + gaussian() * 0.9;
        out[i * dimension + d] = value;
        norm += value * value;
      }
      const scale = 1 / Math.sqrt(norm);
      for (let d = 0; d < dimension; d++) out[i * dimension + d] *= scale;
    }
    return out;
  };
  return { vectors: draw(size), queryVectors: draw(queries) };
}

/** The topics bench scale's corpus is drawn around (synthetic-corpus.ts's default). */
const SCALE_TOPICS = 64;

/**
 * The scale bench's vectors (synthetic-corpus.ts): each is half its topic's centre and half an
 * independent random direction, so within a topic every vector is about equally far from every
 * other. The queries are the chunks drawn after the corpus, as its recall queries are. The text is
 * not needed: numbered one-sentence documents stand in for the eval sets' (enough that every topic
 * gets some, which is all the vectors depend on).
 */
export function scaleCorpusVectors(size: number, queries: number, dimension: number, seed: number, topics = SCALE_TOPICS): { vectors: Float32Array; queryVectors: Float32Array } {
  const vectors = new Float32Array(size * dimension);
  const queryVectors = new Float32Array(queries * dimension);
  const english = Array.from({ length: topics * 32 }, (_, i) => [`Sentence ${i} of the stand-in pool.`]);
  let n = 0;
  for (const chunk of generateSyntheticChunks({ english, chinese: [] }, { chunks: size + queries, seed, dimension, topics })) {
    if (n < size) vectors.set(chunk.vector, n * dimension);
    else queryVectors.set(chunk.vector, (n - size) * dimension);
    n++;
  }
  return { vectors, queryVectors };
}

/** The share of each exact answer's ids the approximate answer found, over all queries. */
export function recall(answers: readonly number[][], truth: readonly number[][]): number {
  let found = 0;
  let total = 0;
  truth.forEach((exact, q) => {
    const got = new Set(answers[q]);
    for (const id of exact) if (got.has(id)) found++;
    total += exact.length;
  });
  return total === 0 ? 1 : Math.round((found / total) * 10_000) / 10_000;
}

function sqliteVecCandidate(): AnnCandidate {
  let db: Database.Database | undefined;
  return {
    name: "sqlite-vec exact scan (today)",
    persistence: "in the SQLite file",
    async build(vectors, count, dimension, dir) {
      db = new Database(join(dir, "vectors.sqlite"));
      sqliteVec.load(db);
      db.pragma("journal_mode = WAL");
      db.exec(`CREATE VIRTUAL TABLE v USING vec0(embedding float[${dimension}] distance_metric=cosine, enabled integer)`);
      const insert = db.prepare(`INSERT INTO v (rowid, embedding, enabled) VALUES (?, ?, 1)`);
      db.transaction(() => {
        for (let i = 0; i < count; i++) insert.run(BigInt(i), blob(vectors.subarray(i * dimension, (i + 1) * dimension)));
      })();
    },
    async search(query, k) {
      const rows = db!.prepare(`SELECT rowid FROM v WHERE embedding MATCH ? AND k = ? AND enabled = 1`).all(blob(query), BigInt(k)) as { rowid: number }[];
      return rows.map((row) => Number(row.rowid));
    },
    async save() {},
    close: () => db?.close(),
  };
}

async function usearchCandidate(): Promise<AnnCandidate | string> {
  const usearch = await import("usearch");
  let index: InstanceType<typeof usearch.Index> | undefined;
  return {
    name: `usearch 2.26.2 HNSW (M ${HNSW_PARAMETERS.connectivity}, ef ${HNSW_PARAMETERS.expansion_add}/${HNSW_PARAMETERS.expansion_search}, as the store runs it)`,
    persistence: "save / load / view (mmap)",
    async build(vectors, count, dimension) {
      index = new usearch.Index({ dimensions: dimension, metric: usearch.MetricKind.Cos, quantization: usearch.ScalarKind.F32, ...HNSW_PARAMETERS, multi: false });
      const keys = new BigUint64Array(count);
      for (let i = 0; i < count; i++) keys[i] = BigInt(i);
      index.add(keys, vectors.subarray(0, count * dimension));
    },
    atExpansion(dir, expansion) {
      const viewed = new usearch.Index({ dimensions: index!.dimensions(), metric: usearch.MetricKind.Cos, quantization: usearch.ScalarKind.F32, ...HNSW_PARAMETERS, expansion_search: expansion, multi: false });
      viewed.view(join(dir, "index.usearch"));
      return { name: `usearch, the same build searched at ef ${expansion}`, search: (query, k) => Array.from(viewed.search(query, k, 1).keys, Number) };
    },
    async search(query, k) {
      const matches = index!.search(query, k, 1);
      return Array.from(matches.keys, Number);
    },
    async save(dir) {
      index!.save(join(dir, "index.usearch"));
    },
    close: () => {},
  };
}

async function hnswlibCandidate(): Promise<AnnCandidate | string> {
  const hnswlib = optionalModule<HnswlibModule>("hnswlib-node");
  if (typeof hnswlib === "string") return hnswlib;
  let index: HnswlibIndex | undefined;
  return {
    name: "hnswlib-node 3.0.0 HNSW (M 16, ef 200/64)",
    persistence: "writeIndex / readIndex (no mmap)",
    async build(vectors, count, dimension) {
      index = new hnswlib.HierarchicalNSW("cosine", dimension);
      index.initIndex({ maxElements: count, m: 16, efConstruction: 200 });
      for (let i = 0; i < count; i++) index.addPoint(Array.from(vectors.subarray(i * dimension, (i + 1) * dimension)), i);
      index.setEf(64);
    },
    async search(query, k) {
      return index!.searchKnn(Array.from(query), k).neighbors;
    },
    async save(dir) {
      index!.writeIndexSync(join(dir, "index.hnsw"));
    },
    close: () => {},
  };
}

async function lancedbCandidate(): Promise<AnnCandidate | string> {
  const lancedb = optionalModule<LancedbModule>("@lancedb/lancedb");
  if (typeof lancedb === "string") return lancedb;
  let table: LancedbTable | undefined;
  return {
    name: "LanceDB 0.31.0 IVF_PQ (nprobes 20, refine 10)",
    persistence: "on disk (Lance files, read through the OS cache)",
    async build(vectors, count, dimension, dir) {
      const db = await lancedb.connect(dir);
      const rows = Array.from({ length: count }, (_, i) => ({ id: i, vector: Array.from(vectors.subarray(i * dimension, (i + 1) * dimension)) }));
      table = await db.createTable("chunks", rows);
      await table.createIndex("vector", { config: lancedb.Index.ivfPq({ distanceType: "cosine" }) });
    },
    async search(query, k) {
      const rows = (await table!.vectorSearch(Array.from(query)).distanceType("cosine").nprobes(20).refineFactor(10).limit(k).select(["id", "_distance"]).toArray()) as { id: number }[];
      return rows.map((row) => Number(row.id));
    },
    async save() {},
    close: () => table?.close(),
  };
}

// The few calls the bench makes of the optional packages, typed here since they need not be installed.
interface HnswlibIndex {
  initIndex(options: { maxElements: number; m: number; efConstruction: number }): void;
  addPoint(point: number[], label: number): void;
  setEf(ef: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[] };
  writeIndexSync(path: string): void;
}
interface HnswlibModule {
  HierarchicalNSW: new (space: "cosine", dimension: number) => HnswlibIndex;
}
interface LancedbQuery {
  distanceType(type: "cosine"): LancedbQuery;
  nprobes(n: number): LancedbQuery;
  refineFactor(n: number): LancedbQuery;
  limit(n: number): LancedbQuery;
  select(columns: string[]): LancedbQuery;
  toArray(): Promise<unknown[]>;
}
interface LancedbTable {
  createIndex(column: string, options: { config: unknown }): Promise<void>;
  vectorSearch(vector: number[]): LancedbQuery;
  close(): void;
}
interface LancedbModule {
  connect(uri: string): Promise<{ createTable(name: string, rows: Record<string, unknown>[]): Promise<LancedbTable> }>;
  Index: { ivfPq(options: { distanceType: "cosine" }): unknown };
}

/** A package the bench measures only when present (not a dependency of Quarry). */
function optionalModule<T>(name: string): T | string {
  try {
    return createRequire(import.meta.url)(name) as T;
  } catch {
    return `not installed (npm i --no-save ${name})`;
  }
}

function blob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
