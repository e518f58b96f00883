// bench observability: what tracing and metrics cost. Two embedded `quarry serve` processes side by
// side on the same machine, alike but for that: "on" exports every span over OTLP/HTTP (to
// JAEGER_OTLP_URL when set, else to a real OTLP/HTTP listener in this process) and records metrics,
// scraped once a round; "off" has no OTLP endpoint and QUARRY_METRICS=off. Each round ingests a
// batch of documents into each (upload to the last READY: documents per second) and runs the same
// Search requests against each (p50 at concurrency 1), the arms' order alternating round by round
// so drift in the shared machine's load hits both alike. The ratios are on / off.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";
import { DocumentStatus, RetrievalMode } from "../gen/quarry/common/v1/common_pb.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../lib/testing/otlp-receiver.ts";
import { describeMachine, loadAverageNow, type MachineInfo } from "./machine.ts";
import { ratio, summarize, type LatencySummary } from "./percentiles.ts";
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
  /** Write each arm's CPU profile (node --cpu-prof) under this folder, in `on/` and `off/`. */
  cpuProfileDir?: string;
  /** The on arm traces this share of requests (OTEL_TRACES_SAMPLER=parentbased_traceidratio); every one when unset. */
  sampleRatio?: number;
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

export interface ObservabilityBenchReport {
  bench: "observability";
  backend: "embedded";
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  settings: Omit<ObservabilityBenchOptions, "progress">;
  spansTo: string;
  spansReceived?: number;
  on: ArmResult;
  off: ArmResult;
  /** on / off: the goal is ≤ 1.03. */
  searchP50Ratio: number;
  /** off / on: the goal is ≤ 1.03. */
  ingestThroughputRatio: number;
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
  process: QuarryProcess;
  client: QuarryClient;
  dataDir: string;
  knowledgeBase: string;
  ingestSeconds: number;
  documents: number;
  searchMs: number[];
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

async function startArm(arm: Arm, otlpEndpoint: string, options: ObservabilityBenchOptions): Promise<RunningArm> {
  const dataDir = await mkdtemp(join(tmpdir(), `quarry-bench-obs-${arm}-`));
  const cpuProfileDir = options.cpuProfileDir;
  const quarry = await startEmbeddedServe(
    dataDir,
    undefined,
    armEnv(arm, otlpEndpoint, options),
    cpuProfileDir ? ["--cpu-prof", "--cpu-prof-dir", join(cpuProfileDir, arm)] : [],
  );
  const client = gatewayClient(quarry.url);
  const knowledgeBase = (await client.createKnowledgeBase({ name: `bench-observability-${arm}` })).knowledgeBase!.id;
  return { arm, process: quarry, client, dataDir, knowledgeBase, ingestSeconds: 0, documents: 0, searchMs: [] };
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
    if (update.status === DocumentStatus.FAILED) throw new Error(`${arm.arm}: a document failed: ${update.error}`);
    if (update.status === DocumentStatus.READY) pending.delete(update.documentId);
    if (pending.size === 0) break;
  }
  arm.ingestSeconds += (performance.now() - started) / 1000;
  arm.documents += count;
}

async function searchRound(arm: RunningArm, round: number, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const query = QUESTIONS[(round * count + i) % QUESTIONS.length];
    const started = performance.now();
    await arm.client.search({ query, knowledgeBases: [arm.knowledgeBase], settings: { mode: RetrievalMode.HYBRID } });
    arm.searchMs.push(performance.now() - started);
  }
}

/** What an operator's Prometheus does between rounds: read /metrics, so collecting it is paid too. */
async function scrape(arm: RunningArm, options: ObservabilityBenchOptions): Promise<void> {
  if (arm.arm !== "on" || options.control || options.only === "tracing") return;
  const res = await fetch(`${arm.process.url}/metrics`);
  if (!res.ok) throw new Error(`on: /metrics answered ${res.status}`);
  await res.text();
}

async function stopArm(arm: RunningArm): Promise<void> {
  arm.process.child.kill("SIGTERM");
  await arm.process.exited;
  await rm(arm.dataDir, { recursive: true, force: true });
}

function result(arm: RunningArm): ArmResult {
  return { arm: arm.arm, documents: arm.documents, ingestSeconds: arm.ingestSeconds, documentsPerSecond: arm.documents / arm.ingestSeconds, search: summarize(arm.searchMs) };
}

export async function runObservabilityBench(options: ObservabilityBenchOptions): Promise<ObservabilityBenchReport> {
  const log = options.progress ?? (() => {});
  const machine = describeMachine();
  const jaeger = process.env.JAEGER_OTLP_URL?.trim();
  const receiver: OtlpReceiver | undefined = jaeger ? undefined : await startOtlpReceiver();
  const endpoint = jaeger ?? receiver!.endpoint;
  const arms: RunningArm[] = [];
  try {
    arms.push(await startArm("on", endpoint, options), await startArm("off", endpoint, options));
    // Warm-up outside the measurement: models loaded, first documents and queries through both.
    for (const arm of arms) {
      await ingestRound(arm, 1_000_000, 2);
      await searchRound(arm, 0, 5);
      arm.ingestSeconds = 0;
      arm.documents = 0;
      arm.searchMs = [];
    }
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? arms : [...arms].reverse();
      for (const arm of order) {
        await ingestRound(arm, round * options.documentsPerRound, options.documentsPerRound);
        await searchRound(arm, round, options.queriesPerRound);
        await scrape(arm, options);
      }
      const [on, off] = arms.map(result);
      log(`round ${round + 1}/${options.rounds}: docs/s on ${on.documentsPerSecond.toFixed(2)} off ${off.documentsPerSecond.toFixed(2)}; search p50 on ${on.search.p50.toFixed(1)} ms off ${off.search.p50.toFixed(1)} ms`);
    }
    const [on, off] = arms.map(result);
    return {
      bench: "observability",
      backend: "embedded",
      machine,
      loadAverageEnd: loadAverageNow(),
      settings: { rounds: options.rounds, documentsPerRound: options.documentsPerRound, queriesPerRound: options.queriesPerRound, control: options.control ?? false, only: options.only, cpuProfileDir: options.cpuProfileDir, sampleRatio: options.sampleRatio },
      spansTo: options.control ? "nowhere (control: both arms off)" : jaeger ? `Jaeger at ${jaeger}` : "an OTLP/HTTP listener in the bench process",
      spansReceived: receiver?.spans.length,
      on: on!,
      off: off!,
      searchP50Ratio: ratio(on!.search.p50, off!.search.p50),
      ingestThroughputRatio: ratio(off!.documentsPerSecond, on!.documentsPerSecond),
    };
  } finally {
    await Promise.all(arms.map(stopArm));
    await receiver?.close();
  }
}

export function formatObservabilityReport(r: ObservabilityBenchReport): string {
  const row = (a: ArmResult) =>
    `| ${a.arm} | ${a.documents} | ${a.ingestSeconds.toFixed(1)} | ${a.documentsPerSecond.toFixed(2)} | ${a.search.count} | ${a.search.p50.toFixed(1)} | ${a.search.p95.toFixed(1)} |`;
  return [
    `## bench observability — ${r.settings.only ? `${r.settings.only} only` : "tracing and metrics"} on vs off (${r.backend})${r.settings.sampleRatio !== undefined ? `, tracing ${r.settings.sampleRatio} of requests` : ""}${r.settings.control ? ", control run: the on arm is off too" : ""}`,
    "",
    `${r.machine.cpus} × ${r.machine.cpuModel}, load at the end ${r.loadAverageEnd.map((l) => l.toFixed(2)).join(" ")}; ${r.settings.rounds} interleaved rounds of ${r.settings.documentsPerRound} documents and ${r.settings.queriesPerRound} hybrid searches per arm; spans to ${r.spansTo}${r.spansReceived !== undefined ? ` (${r.spansReceived} spans received)` : ""}.`,
    "",
    "| arm | documents | ingest s | docs/s | searches | search p50 ms | search p95 ms |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    row(r.on),
    row(r.off),
    "",
    `search p50 on/off: **${r.searchP50Ratio.toFixed(3)}**; ingest throughput off/on: **${r.ingestThroughputRatio.toFixed(3)}** (goal: both ≤ 1.03)`,
    "",
  ].join("\n");
}
