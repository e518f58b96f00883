// bench small-ingest: many small documents (one SciFact abstract each, as `quarry eval` ingests its
// corpus, 8 uploads in flight) through the whole pipeline of an embedded Quarry on OpenSearch, from
// the first upload to the last READY on WatchIngestion. With --baseline-root, another checkout's
// Quarry (the code before) runs the same ingest in the same process, rounds alternating which goes
// first, and the report gives this checkout's figures as ratios of the baseline's; with
// --sqlite-reference this checkout also runs on embedded SQLite each round, the rate to match.
//
// Each Quarry reaches OpenSearch through a counting proxy (engine-request-counter.ts), so beside
// documents per second — which the shared machine's load moves a lot, the model being most of the
// CPU — the report says which requests each document cost the engine and how long they took.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import type { startBenchBackend as StartBenchBackend } from "./bench-backend.ts";
import { startOpenAiStub } from "../lib/testing/openai-stub.ts";
import { startEngineRequestCounter, type RequestKind } from "./engine-request-counter.ts";
import { describeMachine, loadAverageNow, machineLine, type MachineInfo } from "./machine.ts";
import { ratio } from "./percentiles.ts";

export interface SmallIngestBenchOptions {
  opensearchUrl: string;
  documents: number;
  rounds: number;
  evalDir: string;
  /** A checkout of the code to compare with (its node_modules installed or linked). */
  baselineRoot?: string;
  /** Also ingest with this checkout on embedded SQLite each round: the rate the engine should not lower. */
  sqliteReference?: boolean;
  /**
   * "local": the local model, as `quarry eval` runs (on a busy 2-core machine it is most of the CPU
   * and bounds every backend alike). "stub": an OpenAI-compatible embeddings server answering
   * hashing vectors (lib/testing/openai-stub.ts), which takes the model out so the figure is what
   * the pipeline and the engine can carry.
   */
  embedder?: "local" | "stub";
  progress?(line: string): void;
}

export interface SmallIngestRun {
  /** "this on SQLite" is the reference: the same pipeline with the embedded engine. */
  code: "baseline" | "this" | "this on SQLite";
  round: number;
  seconds: number;
  documentsPerSecond: number;
  failed: number;
  /** Engine requests per document, all kinds. */
  requestsPerDocument: number;
  /** Requests per document that refresh (refresh=true or wait_for, or _refresh). */
  refreshesPerDocument: number;
  /** Summed engine request time per document, ms. */
  engineMsPerDocument: number;
  kinds: Record<string, RequestKind>;
  loadAverageEnd: [number, number, number];
}

export interface SmallIngestBenchReport {
  bench: "small-ingest";
  backend: "opensearch";
  machine: MachineInfo;
  settings: { documents: number; rounds: number; baselineRoot?: string; sqliteReference?: boolean; embedder: "local" | "stub" };
  runs: SmallIngestRun[];
  /** This checkout ÷ baseline, medians over the rounds (present with a baseline). */
  ratios?: { documentsPerSecond: number; requestsPerDocument: number; refreshesPerDocument: number; engineMsPerDocument: number };
  /** Documents/s on OpenSearch ÷ on SQLite (medians), for each code measured on OpenSearch. */
  overSqlite?: { baseline?: number; this: number };
}

const UPLOADS_IN_FLIGHT = 8;

function scifactAbstracts(evalDir: string, count: number): { fileName: string; content: Uint8Array }[] {
  const lines = readFileSync(join(evalDir, "scifact", "corpus.jsonl"), "utf8").split("\n").filter((l) => l.trim());
  if (count > lines.length) throw new RangeError(`SciFact has ${lines.length} abstracts, not ${count}`);
  return lines.slice(0, count).map((line) => {
    const doc = JSON.parse(line) as { _id: string; title: string; text: string };
    return { fileName: `${doc._id}.md`, content: new TextEncoder().encode(`# ${doc.title}\n\n${doc.text}`) };
  });
}

async function loadStart(root: string): Promise<typeof StartBenchBackend> {
  const module = (await import(pathToFileURL(join(root, "bench", "bench-backend.ts")).href)) as { startBenchBackend: typeof StartBenchBackend };
  return module.startBenchBackend;
}

function isRefreshing(kind: string): boolean {
  return /refresh=(true|wait_for|)$/.test(kind) || kind.includes("_refresh");
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export async function runSmallIngestBench(options: SmallIngestBenchOptions): Promise<SmallIngestBenchReport> {
  const machine = describeMachine();
  const log = options.progress ?? (() => {});
  const docs = scifactAbstracts(options.evalDir, options.documents);
  const current = await loadStart(resolve(import.meta.dirname, ".."));
  const codes: { code: SmallIngestRun["code"]; start: typeof StartBenchBackend }[] = [{ code: "this", start: current }];
  if (options.baselineRoot) codes.unshift({ code: "baseline", start: await loadStart(resolve(options.baselineRoot)) });
  if (options.sqliteReference) codes.push({ code: "this on SQLite", start: current });
  const counter = await startEngineRequestCounter(options.opensearchUrl);
  const embedder = options.embedder ?? "local";
  const stub = embedder === "stub" ? await startOpenAiStub({ embeddingDimension: 384 }) : undefined;
  const env = stub ? { QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: stub.url, QUARRY_EMBEDDING_MODEL: "stub-hashing", QUARRY_EMBEDDING_DIMENSION: "384" } : undefined;
  const runs: SmallIngestRun[] = [];
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const order = round % 2 === 1 ? codes : [...codes].reverse();
      for (const { code, start } of order) {
        log(`[small-ingest] round ${round}, ${code}: ${docs.length} documents`);
        runs.push(await ingestOnce(start, counter, docs, code, round, env));
        // The stub keeps every request it answered; a run's are not needed after it.
        stub?.requests.splice(0);
        const run = runs[runs.length - 1];
        log(`[small-ingest] round ${round}, ${code}: ${run.documentsPerSecond} documents/s, ${run.requestsPerDocument} requests and ${run.refreshesPerDocument} refreshes per document`);
      }
    }
  } finally {
    await counter.close();
    await stub?.close();
  }
  const medianOf = (code: SmallIngestRun["code"], pick: (run: SmallIngestRun) => number) => median(runs.filter((r) => r.code === code).map(pick));
  const ratios = options.baselineRoot
    ? {
        documentsPerSecond: ratio(medianOf("this", (r) => r.documentsPerSecond), medianOf("baseline", (r) => r.documentsPerSecond)),
        requestsPerDocument: ratio(medianOf("this", (r) => r.requestsPerDocument), medianOf("baseline", (r) => r.requestsPerDocument)),
        refreshesPerDocument: ratio(medianOf("this", (r) => r.refreshesPerDocument), medianOf("baseline", (r) => r.refreshesPerDocument)),
        engineMsPerDocument: ratio(medianOf("this", (r) => r.engineMsPerDocument), medianOf("baseline", (r) => r.engineMsPerDocument)),
      }
    : undefined;
  const sqlite = options.sqliteReference ? medianOf("this on SQLite", (r) => r.documentsPerSecond) : undefined;
  const overSqlite = sqlite
    ? { this: ratio(medianOf("this", (r) => r.documentsPerSecond), sqlite), ...(options.baselineRoot ? { baseline: ratio(medianOf("baseline", (r) => r.documentsPerSecond), sqlite) } : {}) }
    : undefined;
  return {
    bench: "small-ingest",
    backend: "opensearch",
    machine,
    settings: { documents: options.documents, rounds: options.rounds, baselineRoot: options.baselineRoot, sqliteReference: options.sqliteReference, embedder },
    runs,
    ratios,
    overSqlite,
  };
}

async function ingestOnce(
  start: typeof StartBenchBackend,
  counter: Awaited<ReturnType<typeof startEngineRequestCounter>>,
  docs: { fileName: string; content: Uint8Array }[],
  code: SmallIngestRun["code"],
  round: number,
  env: Record<string, string> | undefined,
): Promise<SmallIngestRun> {
  const backend = await start(code === "this on SQLite" ? { backend: "embedded", env } : { backend: "opensearch", opensearchUrl: counter.url, env });
  try {
    const client = backend.client;
    const { knowledgeBase } = await client.createKnowledgeBase({ name: "bench-small-ingest" });
    const kb = knowledgeBase!.id;
    // One document first, so loading the model is not counted as throughput.
    const warm = await client.uploadDocument({ header: { knowledgeBase: kb, fileName: "warm-up.md", mimeType: "text/markdown" }, content: new TextEncoder().encode("# Warm up\n\nLoads the model.") });
    for await (const update of client.watchIngestion({ documentIds: [warm.document!.id] })) if (update.status === DocumentStatus.READY || update.status === DocumentStatus.FAILED) break;

    counter.reset();
    const started = performance.now();
    let next = 0;
    const uploader = async () => {
      while (next < docs.length) {
        const doc = docs[next++];
        await client.uploadDocument({ header: { knowledgeBase: kb, fileName: doc.fileName, mimeType: "text/markdown" }, content: doc.content });
      }
    };
    await Promise.all(Array.from({ length: UPLOADS_IN_FLIGHT }, uploader));
    const finished = new Map<string, DocumentStatus>();
    for await (const update of client.watchIngestion({ knowledgeBase: kb })) {
      if (update.status === DocumentStatus.READY || update.status === DocumentStatus.FAILED) finished.set(update.documentId, update.status);
    }
    const seconds = (performance.now() - started) / 1000;
    const kinds = counter.counts();
    const n = docs.length;
    const sum = (pick: (kind: string, entry: RequestKind) => number) => [...kinds].reduce((total, [kind, entry]) => total + pick(kind, entry), 0);
    const round2 = (x: number) => Math.round(x * 100) / 100;
    return {
      code,
      round,
      seconds: round2(seconds),
      documentsPerSecond: round2(n / seconds),
      failed: [...finished.values()].filter((s) => s === DocumentStatus.FAILED).length,
      requestsPerDocument: round2(sum((_, e) => e.count) / n),
      refreshesPerDocument: round2(sum((kind, e) => (isRefreshing(kind) ? e.count : 0)) / n),
      engineMsPerDocument: round2(sum((_, e) => e.ms) / n),
      kinds: Object.fromEntries([...kinds].sort((a, b) => b[1].ms - a[1].ms).map(([kind, e]) => [kind, { count: e.count, ms: Math.round(e.ms) }])),
      loadAverageEnd: loadAverageNow(),
    };
  } finally {
    await backend.close();
  }
}

export function formatSmallIngestReport(r: SmallIngestBenchReport): string {
  const lines = [
    `## small-ingest (OpenSearch): ${r.settings.documents} one-abstract documents, ${r.settings.rounds} round(s), ${r.settings.embedder === "stub" ? "stub embedder (hashing vectors over HTTP)" : "the local model"}`,
    "",
    machineLine(r.machine),
    r.settings.baselineRoot ? `baseline: the checkout at ${r.settings.baselineRoot}` : "no baseline (--baseline-root) given",
    "",
    "| round | code | seconds | documents/s | failed | engine requests / doc | refreshing requests / doc | engine ms / doc | load at end |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ...r.runs.map((run) => `| ${run.round} | ${run.code} | ${run.seconds} | ${run.documentsPerSecond} | ${run.failed} | ${run.requestsPerDocument} | ${run.refreshesPerDocument} | ${run.engineMsPerDocument} | ${run.loadAverageEnd.join(" / ")} |`),
  ];
  if (r.overSqlite) {
    lines.push("", `OpenSearch ÷ SQLite, documents/s (medians): ${r.overSqlite.baseline === undefined ? "" : `baseline **${r.overSqlite.baseline}**, `}this **${r.overSqlite.this}**`);
  }
  if (r.ratios) {
    lines.push(
      "",
      `this ÷ baseline (medians): documents/s **${r.ratios.documentsPerSecond}**, engine requests per document **${r.ratios.requestsPerDocument}**, refreshing requests per document **${r.ratios.refreshesPerDocument}**, engine time per document **${r.ratios.engineMsPerDocument}**`,
    );
  }
  const last = (code: SmallIngestRun["code"]) => [...r.runs].reverse().find((run) => run.code === code);
  for (const code of ["baseline", "this"] as const) {
    const run = last(code);
    if (!run) continue;
    lines.push("", `Requests per document by kind (${code}, round ${run.round}):`, "", "| request | per doc | mean ms |", "| --- | ---: | ---: |");
    for (const [kind, e] of Object.entries(run.kinds)) lines.push(`| ${kind} | ${(e.count / r.settings.documents).toFixed(2)} | ${(e.ms / e.count).toFixed(1)} |`);
  }
  return `${lines.join("\n")}\n`;
}
