// bench observability: what tracing and metrics cost. Two embedded `quarry serve` processes side by
// side on the same machine, alike but for that: "on" exports every span over OTLP/HTTP (to
// JAEGER_OTLP_URL when set, else to a real OTLP/HTTP listener in this process) and records metrics,
// scraped once a round; "off" has no OTLP endpoint and QUARRY_METRICS=off. Each round ingests a
// batch of documents into each (upload to the last READY: documents per second) and runs the same
// Search requests against each (p50 at concurrency 1), the arms' order alternating round by round
// so drift in the shared machine's load hits both alike. The ratios are on / off. Two processes
// running the same code differ by a few per cent on a shared machine (where each landed, its JIT's
// luck), so with --processes N each arm is N processes whose searches are pooled, and the spread
// between an arm's own processes is reported beside the ratio: every run carries its noise floor.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";
import { DocumentStatus, RetrievalMode } from "../gen/quarry/common/v1/common_pb.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../lib/testing/otlp-receiver.ts";
import { describeMachine, loadAverageNow, type MachineInfo } from "./machine.ts";
import { percentile, ratio, summarize, type LatencySummary } from "./percentiles.ts";
import { roundBootstrap, type RoundInterval } from "./round-bootstrap.ts";
import { buildSearchCorpus, copyCorpus, type SearchCorpus } from "./observability-corpus.ts";
import { startEmbeddedServe, type QuarryProcess } from "./quarry-process.ts";

export interface ObservabilityBenchOptions {
  rounds: number;
  /** Documents each arm ingests per round. */
  documentsPerRound: number;
  /** Search requests each arm answers per round. */
  queriesPerRound: number;
  /** An A/A run: both arms off, to measure how far two like processes differ on this machine anyway. */
  control?: boolean;
  /** Turn on only this half in the "on" arm (the other stays off as in "off"), to see which half costs what. */
  only?: "tracing" | "metrics";
  /** Processes per arm (default 1): their searches and ingests are pooled, and their spread reported. */
  processesPerArm?: number;
  /** Write each arm's CPU profile (node --cpu-prof) under this folder, in `on/` and `off/` (`on-2/`… for further processes). */
  cpuProfileDir?: string;
  /** The on arm traces this share of requests (OTEL_TRACES_SAMPLER=parentbased_traceidratio); every one when unset. */
  sampleRatio?: number;
  /**
   * Search a synthetic corpus of this many chunks (bench query's, each process on a copy of one
   * store) with bench query's queries, instead of the notes the rounds ingest. Needs evalDir.
   */
  corpusChunks?: number;
  /** The BEIR folders bench query's corpus and queries come from (../shared/eval). */
  evalDir?: string;
  /**
   * Searches paired instead of phased: after every process has ingested its round, each query goes
   * to every process in turn (the order reversed from one query to the next), so an on search and
   * an off search of the same query run moments apart and the machine's drift between phases, some
   * seconds long, stops falling on one arm. Ingest is measured as before.
   */
  pairedSearches?: boolean;
  seed?: number;
  progress?(line: string): void;
}

export type Arm = "on" | "off";

export interface ArmResult {
  arm: Arm;
  documents: number;
  ingestSeconds: number;
  documentsPerSecond: number;
  search: LatencySummary;
}

/** One process's own figures, to see how far processes of the same arm differ. */
export interface ProcessResult {
  name: string;
  searchP50: number;
  documentsPerSecond: number;
}

export interface ObservabilityBenchReport {
  bench: "observability";
  backend: "embedded";
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  settings: Omit<ObservabilityBenchOptions, "progress">;
  spansTo: string;
  /** What the searches ran against. */
  searched: string;
  spansReceived?: number;
  on: ArmResult;
  off: ArmResult;
  /** on / off: the goal is ≤ 1.03. */
  searchP50Ratio: number;
  /** off / on: the goal is ≤ 1.03. */
  ingestThroughputRatio: number;
  processes: ProcessResult[];
  /**
   * With several processes per arm: the largest ratio of search p50s between two processes of the
   * same arm, which run the same code. An on/off ratio inside it is not told apart from noise.
   */
  withinArmSearchSpread?: number;
  /** Where the two ratios would likely land on a rerun with as many rounds (round-bootstrap.ts). */
  searchP50RatioInterval: RoundInterval;
  ingestThroughputRatioInterval: RoundInterval;
  /** Each round's own search p50 ratio, on / off. */
  roundSearchP50Ratios: number[];
}

/** What one arm did in one round, its processes pooled. */
export interface RoundFigures {
  searchMs: number[];
  ingestSeconds: number;
  documents: number;
}

/** Topics the documents are about, so the questions find something; words repeat across documents as in a real base. */
const TOPICS = ["harbour", "ferry", "lighthouse", "canal", "allotment", "railway", "museum", "library", "market", "bridge"];
const VERBS = ["opens", "closes", "is repaired", "is inspected", "is painted", "is cleaned", "is visited", "is measured"];
const TIMES = ["at dawn", "every spring", "on Tuesdays", "twice a year", "after the storms", "before the festival", "at night", "in winter"];

/** A document of a few paragraphs about one topic; deterministic by its number. */
function documentText(n: number): string {
  const topic = TOPICS[n % TOPICS.length];
  const paragraphs: string[] = [`# The ${topic}, note ${n}`];
  for (let p = 0; p < 6; p++) {
    const sentences = Array.from({ length: 5 }, (_, s) => {
      const k = n * 31 + p * 7 + s;
      return `The ${topic} ${VERBS[k % VERBS.length]} ${TIMES[(k >> 3) % TIMES.length]}, as record ${k} of section ${p} says.`;
    });
    paragraphs.push(sentences.join(" "));
  }
  return `${paragraphs.join("\n\n")}\n`;
}

const QUESTIONS = TOPICS.flatMap((topic) => [`when is the ${topic} repaired`, `who visits the ${topic} in winter`]);

interface RunningArm {
  arm: Arm;
  /** "on", "off", or "on-2"… for an arm's further processes. */
  name: string;
  process: QuarryProcess;
  client: QuarryClient;
  dataDir: string;
  knowledgeBase: string;
  /** Where its searches go: its own notes' base, or the corpus's. */
  searchBase: string;
  ingestSeconds: number;
  documents: number;
  searchMs: number[];
  /** The same figures, round by round. */
  rounds: RoundFigures[];
}

/** The arm's environment: "off" has neither tracing nor metrics; "on" both, or only one of them. */
function armEnv(arm: Arm, otlpEndpoint: string, options: ObservabilityBenchOptions): Record<string, string> {
  if (arm === "off" || options.control) return { QUARRY_METRICS: "off" };
  return {
    ...(options.only === "metrics" ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint, OTEL_SERVICE_NAME: "quarry-bench-observability" }),
    ...(options.only !== "metrics" && options.sampleRatio !== undefined
      ? { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: String(options.sampleRatio) }
      : {}),
    ...(options.only === "tracing" ? { QUARRY_METRICS: "off" } : {}),
  };
}

async function startArm(arm: Arm, index: number, otlpEndpoint: string, options: ObservabilityBenchOptions, corpus: SearchCorpus | undefined): Promise<RunningArm> {
  const name = index === 0 ? arm : `${arm}-${index + 1}`;
  const dataDir = await mkdtemp(join(tmpdir(), `quarry-bench-obs-${name}-`));
  if (corpus) await copyCorpus(corpus, dataDir);
  const cpuProfileDir = options.cpuProfileDir;
  const quarry = await startEmbeddedServe(
    dataDir,
    undefined,
    armEnv(arm, otlpEndpoint, options),
    cpuProfileDir ? ["--cpu-prof", "--cpu-prof-dir", join(cpuProfileDir, name)] : [],
  );
  const client = gatewayClient(quarry.url);
  const knowledgeBase = (await client.createKnowledgeBase({ name: `bench-observability-${name}` })).knowledgeBase!.id;
  return { arm, name, process: quarry, client, dataDir, knowledgeBase, searchBase: corpus?.knowledgeBaseId ?? knowledgeBase, ingestSeconds: 0, documents: 0, searchMs: [], rounds: [] };
}

async function ingestRound(arm: RunningArm, first: number, count: number): Promise<void> {
  const started = performance.now();
  const ids: string[] = [];
  for (let n = first; n < first + count; n++) {
    const res = await arm.client.uploadDocument({ header: { knowledgeBase: arm.knowledgeBase, fileName: `note-${n}.md`, mimeType: "text/markdown" }, content: new TextEncoder().encode(documentText(n)) });
    ids.push(res.document!.id);
  }
  const pending = new Set(ids);
  for await (const update of arm.client.watchIngestion({ documentIds: ids }, { signal: AbortSignal.timeout(600_000) })) {
    if (update.status === DocumentStatus.FAILED) throw new Error(`${arm.name}: a document failed: ${update.error}`);
    if (update.status === DocumentStatus.READY) pending.delete(update.documentId);
    if (pending.size === 0) break;
  }
  arm.ingestSeconds += (performance.now() - started) / 1000;
  arm.documents += count;
}

async function searchRound(arm: RunningArm, round: number, count: number, questions: readonly string[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const query = questions[(round * count + i) % questions.length];
    const started = performance.now();
    await arm.client.search({ query, knowledgeBases: [arm.searchBase], settings: { mode: RetrievalMode.HYBRID } });
    arm.searchMs.push(performance.now() - started);
  }
}

/** The order the processes get query `i` of a round in: reversed from one query to the next, so no process always goes first. */
export function pairedOrder<T>(order: readonly T[], i: number): readonly T[] {
  return i % 2 === 0 ? order : [...order].reverse();
}

/**
 * A round with paired searches: each process ingests its documents (in `order`), then the round's
 * queries go to every process one after another, the order reversed from one query to the next.
 */
async function pairedRound(order: readonly RunningArm[], round: number, options: ObservabilityBenchOptions, questions: readonly string[]): Promise<void> {
  const marks = order.map((arm) => [arm.ingestSeconds, arm.documents, arm.searchMs.length] as const);
  for (const arm of order) await ingestRound(arm, round * options.documentsPerRound, options.documentsPerRound);
  for (let i = 0; i < options.queriesPerRound; i++) {
    const query = questions[(round * options.queriesPerRound + i) % questions.length];
    for (const arm of pairedOrder(order, i)) {
      const started = performance.now();
      await arm.client.search({ query, knowledgeBases: [arm.searchBase], settings: { mode: RetrievalMode.HYBRID } });
      arm.searchMs.push(performance.now() - started);
    }
  }
  for (const [k, arm] of order.entries()) {
    const [seconds, documents, searched] = marks[k];
    arm.rounds.push({ searchMs: arm.searchMs.slice(searched), ingestSeconds: arm.ingestSeconds - seconds, documents: arm.documents - documents });
    await scrape(arm, options);
  }
}

/** What an operator's Prometheus does between rounds: read /metrics, so collecting it is paid too. */
async function scrape(arm: RunningArm, options: ObservabilityBenchOptions): Promise<void> {
  if (arm.arm !== "on" || options.control || options.only === "tracing") return;
  const res = await fetch(`${arm.process.url}/metrics`);
  if (!res.ok) throw new Error(`${arm.name}: /metrics answered ${res.status}`);
  await res.text();
}

async function stopArm(arm: RunningArm): Promise<void> {
  arm.process.child.kill("SIGTERM");
  await arm.process.exited;
  await rm(arm.dataDir, { recursive: true, force: true });
}

/** An arm's figures over all its processes. */
function result(arm: Arm, running: readonly RunningArm[]): ArmResult {
  const mine = running.filter((r) => r.arm === arm);
  const documents = mine.reduce((sum, r) => sum + r.documents, 0);
  const ingestSeconds = mine.reduce((sum, r) => sum + r.ingestSeconds, 0);
  return { arm, documents, ingestSeconds, documentsPerSecond: documents / ingestSeconds, search: summarize(mine.flatMap((r) => r.searchMs)) };
}

function processResult(r: RunningArm): ProcessResult {
  return { name: r.name, searchP50: summarize(r.searchMs).p50, documentsPerSecond: r.documents / r.ingestSeconds };
}

/** An arm's rounds, each pooling what its processes did in it. */
function pooledRounds(arm: Arm, running: readonly RunningArm[]): RoundFigures[] {
  const mine = running.filter((r) => r.arm === arm);
  return mine[0].rounds.map((_, round) => ({
    searchMs: mine.flatMap((r) => r.rounds[round].searchMs),
    ingestSeconds: mine.reduce((sum, r) => sum + r.rounds[round].ingestSeconds, 0),
    documents: mine.reduce((sum, r) => sum + r.rounds[round].documents, 0),
  }));
}

/**
 * The on/off ratios' bootstrap intervals over the rounds (the same rounds drawn for both arms, as
 * they were measured side by side in them), and each round's own search p50 ratio.
 */
export function ratioIntervals(
  on: readonly RoundFigures[],
  off: readonly RoundFigures[],
  options: { replicates?: number; seed?: number } = {},
): Pick<ObservabilityBenchReport, "searchP50RatioInterval" | "ingestThroughputRatioInterval" | "roundSearchP50Ratios"> {
  if (on.length !== off.length) throw new RangeError(`the arms ran ${on.length} and ${off.length} rounds`);
  const p50 = (rounds: readonly RoundFigures[], picked: readonly number[]) => percentile(picked.flatMap((i) => rounds[i].searchMs), 50);
  const throughput = (rounds: readonly RoundFigures[], picked: readonly number[]) =>
    picked.reduce((sum, i) => sum + rounds[i].documents, 0) / picked.reduce((sum, i) => sum + rounds[i].ingestSeconds, 0);
  return {
    searchP50RatioInterval: roundBootstrap(on.length, (picked) => p50(on, picked) / p50(off, picked), options),
    ingestThroughputRatioInterval: roundBootstrap(on.length, (picked) => throughput(off, picked) / throughput(on, picked), options),
    roundSearchP50Ratios: on.map((_, i) => ratio(p50(on, [i]), p50(off, [i]))),
  };
}

/** The largest p50 ratio between two processes of one arm; undefined with one process per arm. */
export function withinArmSpread(processes: readonly (ProcessResult & { arm: Arm })[]): number | undefined {
  let spread: number | undefined;
  for (const arm of ["on", "off"] as const) {
    const p50s = processes.filter((p) => p.arm === arm).map((p) => p.searchP50);
    if (p50s.length < 2) continue;
    spread = Math.max(spread ?? 0, Math.max(...p50s) / Math.min(...p50s));
  }
  return spread;
}

export async function runObservabilityBench(options: ObservabilityBenchOptions): Promise<ObservabilityBenchReport> {
  const log = options.progress ?? (() => {});
  const machine = describeMachine();
  const jaeger = process.env.JAEGER_OTLP_URL?.trim();
  const receiver: OtlpReceiver | undefined = jaeger ? undefined : await startOtlpReceiver();
  const endpoint = jaeger ?? receiver!.endpoint;
  const arms: RunningArm[] = [];
  let corpus: SearchCorpus | undefined;
  try {
    if (options.corpusChunks) {
      if (!options.evalDir) throw new Error("--corpus-chunks needs the BEIR folders bench query's corpus comes from (--eval-dir)");
      log(`loading ${options.corpusChunks} synthetic chunks (bench query's corpus)`);
      corpus = await buildSearchCorpus({ chunks: options.corpusChunks, queries: 100, evalDir: options.evalDir, seed: options.seed ?? 42 });
      log(`loaded in ${corpus.loadSeconds.toFixed(1)} s`);
    }
    const questions = corpus?.queries ?? QUESTIONS;
    // Started alternately (on, off, on-2, off-2…), so no arm gets all the early or late starts.
    for (let i = 0; i < (options.processesPerArm ?? 1); i++) arms.push(await startArm("on", i, endpoint, options, corpus), await startArm("off", i, endpoint, options, corpus));
    // Warm-up outside the measurement: models loaded, first documents and queries through both.
    for (const arm of arms) {
      await ingestRound(arm, 1_000_000, 2);
      await searchRound(arm, 0, 5, questions);
      arm.ingestSeconds = 0;
      arm.documents = 0;
      arm.searchMs = [];
    }
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? arms : [...arms].reverse();
      if (options.pairedSearches) await pairedRound(order, round, options, questions);
      else {
        for (const arm of order) {
          const [seconds, documents, searched] = [arm.ingestSeconds, arm.documents, arm.searchMs.length];
          await ingestRound(arm, round * options.documentsPerRound, options.documentsPerRound);
          await searchRound(arm, round, options.queriesPerRound, questions);
          arm.rounds.push({ searchMs: arm.searchMs.slice(searched), ingestSeconds: arm.ingestSeconds - seconds, documents: arm.documents - documents });
          await scrape(arm, options);
        }
      }
      const [on, off] = [result("on", arms), result("off", arms)];
      log(`round ${round + 1}/${options.rounds}: docs/s on ${on.documentsPerSecond.toFixed(2)} off ${off.documentsPerSecond.toFixed(2)}; search p50 on ${on.search.p50.toFixed(1)} ms off ${off.search.p50.toFixed(1)} ms`);
    }
    const [on, off] = [result("on", arms), result("off", arms)];
    const processes = arms.map((r) => ({ ...processResult(r), arm: r.arm }));
    const intervals = ratioIntervals(pooledRounds("on", arms), pooledRounds("off", arms));
    return {
      bench: "observability",
      backend: "embedded",
      machine,
      loadAverageEnd: loadAverageNow(),
      settings: {
        rounds: options.rounds,
        documentsPerRound: options.documentsPerRound,
        queriesPerRound: options.queriesPerRound,
        processesPerArm: options.processesPerArm ?? 1,
        control: options.control ?? false,
        only: options.only,
        cpuProfileDir: options.cpuProfileDir,
        sampleRatio: options.sampleRatio,
        corpusChunks: options.corpusChunks,
        pairedSearches: options.pairedSearches ?? false,
      },
      spansTo: options.control ? "nowhere (control: both arms off)" : jaeger ? `Jaeger at ${jaeger}` : "an OTLP/HTTP listener in the bench process",
      spansReceived: receiver?.spans.length,
      searched: corpus
        ? `bench query's synthetic corpus of ${corpus.chunks} chunks (a copy per process) with its queries (SciFact claims, cMedIR searches)`
        : "each process's own notes, the ones the rounds ingest",
      on,
      off,
      searchP50Ratio: ratio(on.search.p50, off.search.p50),
      ingestThroughputRatio: ratio(off.documentsPerSecond, on.documentsPerSecond),
      processes: processes.map(({ name, searchP50, documentsPerSecond }) => ({ name, searchP50, documentsPerSecond })),
      withinArmSearchSpread: withinArmSpread(processes),
      ...intervals,
    };
  } finally {
    await Promise.all(arms.map(stopArm));
    await corpus?.remove();
    await receiver?.close();
  }
}

const interval = (i: RoundInterval) => `${Math.round(i.confidence * 100)}% bootstrap interval over rounds ${i.low.toFixed(3)}–${i.high.toFixed(3)}`;

export function formatObservabilityReport(r: ObservabilityBenchReport): string {
  const row = (a: ArmResult) =>
    `| ${a.arm} | ${a.documents} | ${a.ingestSeconds.toFixed(1)} | ${a.documentsPerSecond.toFixed(2)} | ${a.search.count} | ${a.search.p50.toFixed(1)} | ${a.search.p95.toFixed(1)} |`;
  return [
    `## bench observability — ${r.settings.only ? `${r.settings.only} only` : "tracing and metrics"} on vs off (${r.backend})${r.settings.sampleRatio !== undefined ? `, tracing ${r.settings.sampleRatio} of requests` : ""}${r.settings.control ? ", control run: the on arm is off too" : ""}`,
    "",
    `${r.machine.cpus} × ${r.machine.cpuModel}, load at the end ${r.loadAverageEnd.map((l) => l.toFixed(2)).join(" ")}; ${r.settings.rounds} interleaved rounds of ${r.settings.documentsPerRound} documents and ${r.settings.queriesPerRound} hybrid searches per process${r.settings.pairedSearches ? " (each query sent to every process in turn)" : ""}, ${r.settings.processesPerArm ?? 1} process(es) per arm; spans to ${r.spansTo}${r.spansReceived !== undefined ? ` (${r.spansReceived} spans received)` : ""}; searches against ${r.searched}.`,
    "",
    "| arm | documents | ingest s | docs/s | searches | search p50 ms | search p95 ms |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    row(r.on),
    row(r.off),
    "",
    `search p50 on/off: **${r.searchP50Ratio.toFixed(3)}** (${interval(r.searchP50RatioInterval)}); ingest throughput off/on: **${r.ingestThroughputRatio.toFixed(3)}** (${interval(r.ingestThroughputRatioInterval)}) (goal: both ≤ 1.03)`,
    `each round's search p50 on/off: ${r.roundSearchP50Ratios.map((x) => x.toFixed(3)).join(", ")}`,
    ...(r.withinArmSearchSpread === undefined
      ? []
      : [
          `processes' search p50: ${r.processes.map((p) => `${p.name} ${p.searchP50.toFixed(1)} ms`).join(", ")}; widest spread inside one arm: **${r.withinArmSearchSpread.toFixed(3)}** (an on/off ratio within it is noise)`,
        ]),
    "",
  ].join("\n");
}
