// bench stall: does one heavy request stall everyone? ListKnowledgeBases latency on an idle server,
// against the same call while, beside it, a 10 MB one-line document is uploaded and chunked, the
// same file is previewed (PreviewChunks), and a reader keeps sending the widest Search the limits
// allow (every one of --bases distinct knowledge bases named in one request). The server is a child
// process (this checkout's bin, or another's with --quarry-bin for a before/after comparison).
// The busy phase ends once the preview answered and the document was chunked (it reached
// embedding); the server is then stopped with the document still embedding.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";
import { oneLineText } from "./bench-fairness.ts";
import { uploadAndTrack } from "./document-timing.ts";
import { describeMachine, loadAverageNow, type MachineInfo } from "./machine.ts";
import { ratio, summarize, type LatencySummary } from "./percentiles.ts";
import { startEmbeddedServe, THIS_QUARRY_BIN } from "./quarry-process.ts";

export interface StallBenchOptions {
  quarryBin?: string;
  largeBytes: number;
  /** Distinct knowledge bases the reader's Search names at once. */
  bases: number;
  /** ListKnowledgeBases calls timed on the idle server. */
  idleCalls: number;
  /** Longest the busy phase may last, ms. */
  timeoutMs: number;
  /** A folder where the server child writes V8 CPU profiles (main thread and each worker thread) when it exits. */
  cpuProfileDir?: string;
  progress?(line: string): void;
}

export interface StallBenchReport {
  bench: "stall";
  backend: "embedded";
  quarryBin: string;
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  largeBytes: number;
  bases: number;
  idle: LatencySummary;
  busy: LatencySummary;
  /** busy p99 / idle p99. */
  p99Ratio: number;
  /** Upload sent → the document reached embedding (chunked), ms; null = not within the timeout. */
  chunkedMs: number | null;
  /** PreviewChunks of the same file, ms, or its error. */
  preview: { ms: number; chunks: number } | { error: string };
  /** Searches the reader completed during the busy phase, and how many failed. */
  readerCalls: { ok: number; failed: number; lastError?: string };
  goalP99Ms: number;
}

const GOAL_P99_MS = 200;

async function timeListing(client: QuarryClient): Promise<number> {
  const started = performance.now();
  await client.listKnowledgeBases({});
  return performance.now() - started;
}

export async function runStallBench(options: StallBenchOptions): Promise<StallBenchReport> {
  const progress = options.progress ?? (() => {});
  const machine = describeMachine();
  const dataDir = await mkdtemp(join(tmpdir(), "quarry-bench-stall-"));
  const quarryBin = options.quarryBin ?? THIS_QUARRY_BIN;
  const profiling = options.cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const server = await startEmbeddedServe(dataDir, quarryBin, {}, profiling);
  try {
    const client = gatewayClient(server.url);
    progress(`serving from ${quarryBin} at ${server.url}`);
    const names = Array.from({ length: options.bases }, (_, i) => `stall-${i}`);
    for (const name of names) await client.createKnowledgeBase({ name });

    for (let i = 0; i < 20; i++) await timeListing(client); // warm-up
    const idle: number[] = [];
    for (let i = 0; i < options.idleCalls; i++) idle.push(await timeListing(client));
    progress(`idle: ${options.idleCalls} ListKnowledgeBases timed`);

    const text = oneLineText(options.largeBytes);
    const content = new TextEncoder().encode(text);
    let busyOver = false;
    const uploadStarted = performance.now();
    const stopWatching = new AbortController();
    const large = uploadAndTrack(client, names[0], "large.txt", content, options.timeoutMs, stopWatching.signal);
    large.ready.catch(() => {});
    const chunked = Promise.race([
      large.vectorizing.then(() => Math.round(performance.now() - uploadStarted)),
      new Promise<null>((r) => setTimeout(() => r(null), options.timeoutMs).unref()),
    ]);
    const previewStarted = performance.now();
    const preview = client
      .previewChunks({ fileName: "large.txt", content, mimeType: "text/plain", maxChunks: 5 })
      .then((r) => ({ ms: Math.round(performance.now() - previewStarted), chunks: r.totalChunks }))
      .catch((error: unknown) => ({ error: (error as Error).message }));
    const readerCalls = { ok: 0, failed: 0, lastError: undefined as string | undefined };
    const reader = (async () => {
      while (!busyOver) {
        try {
          await client.search({ query: "stone river lantern", knowledgeBases: names });
          readerCalls.ok++;
        } catch (error) {
          readerCalls.failed++;
          readerCalls.lastError = (error as Error).message;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();
    const busy: number[] = [];
    const sampler = (async () => {
      while (!busyOver) {
        busy.push(await timeListing(client));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const [chunkedMs, previewResult] = await Promise.all([chunked, preview]);
    busyOver = true;
    stopWatching.abort();
    await Promise.all([reader, sampler]);
    progress(`busy: ${busy.length} ListKnowledgeBases timed; chunked in ${chunkedMs ?? "—"} ms`);

    const idleSummary = summarize(idle);
    const busySummary = summarize(busy);
    return {
      bench: "stall",
      backend: "embedded",
      quarryBin,
      machine,
      loadAverageEnd: loadAverageNow(),
      largeBytes: options.largeBytes,
      bases: options.bases,
      idle: idleSummary,
      busy: busySummary,
      p99Ratio: ratio(busySummary.p99, idleSummary.p99),
      chunkedMs,
      preview: previewResult,
      readerCalls: { ok: readerCalls.ok, failed: readerCalls.failed, ...(readerCalls.lastError ? { lastError: readerCalls.lastError } : {}) },
      goalP99Ms: GOAL_P99_MS,
    };
  } finally {
    server.child.kill("SIGTERM");
    const exited = await Promise.race([server.exited, new Promise<undefined>((r) => setTimeout(r, 60_000))]);
    if (!exited) server.child.kill("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  }
}

export function formatStallReport(r: StallBenchReport): string {
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const row = (name: string, s: LatencySummary) => `| ${name} | ${s.count} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} |`;
  const preview = "error" in r.preview ? `failed: ${r.preview.error}` : `${(r.preview.ms / 1000).toFixed(1)} s, ${r.preview.chunks} chunks`;
  return [
    `## bench stall (${r.quarryBin})`,
    "",
    `${r.machine.cpus} × ${r.machine.cpuModel}, load ${r.machine.loadAverage.join(" / ")} → ${r.loadAverageEnd.join(" / ")}`,
    "",
    "| ListKnowledgeBases | calls | p50 | p99 | max |",
    "| --- | --- | --- | --- | --- |",
    row("idle server", r.idle),
    row(`beside a ${(r.largeBytes / 2 ** 20).toFixed(1)} MiB one-line upload, its preview and a ${r.bases}-base Search loop`, r.busy),
    "",
    `busy p99 / idle p99: **${r.p99Ratio}**; goal p99 ≤ ${r.goalP99Ms} ms: **${r.busy.p99 <= r.goalP99Ms ? "met" : "missed"}**`,
    "",
    `upload → chunked: ${r.chunkedMs === null ? "not within the timeout" : `${(r.chunkedMs / 1000).toFixed(1)} s`}; preview: ${preview}; ` +
      `reader Searches: ${r.readerCalls.ok} ok, ${r.readerCalls.failed} failed${r.readerCalls.lastError ? ` (${r.readerCalls.lastError})` : ""}`,
    "",
  ].join("\n");
}
