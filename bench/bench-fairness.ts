// bench fairness: how long a small document takes to become ready while a large one is being
// vectorized, against the same small document alone on the same server. The server is a child
// process started from a bin (this checkout's by default; another checkout's with --quarry-bin, to
// measure the code before a change side by side), so its peak RSS is its own.
//
// The large document is one line of words (no paragraph breaks), as in the report that started
// this: 10 MB of it is about 16,000 chunks, which takes the local model tens of minutes on 2 cores.
// The bench does not wait for it: once the small documents are ready (or --timeout passed), the
// server gets SIGTERM, which also shows how long a busy server takes to stop.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayClient } from "../client/gateway-client.ts";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import { uploadAndTrack } from "./document-timing.ts";
import { describeMachine, loadAverageNow, type MachineInfo } from "./machine.ts";
import { startEmbeddedServe, THIS_QUARRY_BIN } from "./quarry-process.ts";
import { seededRandom } from "./synthetic-corpus.ts";

export interface FairnessBenchOptions {
  /** The quarry.mjs to serve with. */
  quarryBin?: string;
  largeBytes: number;
  /** Small documents uploaded behind the large one, one after another, each to its own new knowledge base. */
  smallDocuments: number;
  /** Longest wait for a small document behind the large one, ms. */
  timeoutMs: number;
  progress?(line: string): void;
}

export interface FairnessBenchReport {
  bench: "fairness";
  backend: "embedded";
  quarryBin: string;
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  large: { bytes: number; chunks: number | null; percentWhenSmallDone: number | null; ready: boolean };
  /** Median of the small document alone (after a warm-up), ms. */
  smallAloneMs: number;
  /** Each small document behind the large one, ms; null = not ready within the timeout. */
  smallBehindLargeMs: (number | null)[];
  timeoutMs: number;
  /** SIGTERM → exit, with the large document still in hand. */
  shutdown: { exitCode: number | null; signal: string | null; ms: number | null };
  peakRssMiB: number | null;
}

const SMALL_TEXT = "a 17-byte file.\n\n";

/** One line of seeded pseudo-words, `bytes` long. */
export function oneLineText(bytes: number, seed = 11): string {
  const words = ["quarry", "stone", "river", "lantern", "harbor", "copper", "meadow", "signal", "orchard", "tunnel", "granite", "ember"];
  const random = seededRandom(seed);
  const parts: string[] = [];
  let length = 0;
  while (length < bytes) {
    const word = words[Math.floor(random() * words.length)];
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(" ").slice(0, bytes);
}

export async function runFairnessBench(options: FairnessBenchOptions): Promise<FairnessBenchReport> {
  const progress = options.progress ?? (() => {});
  const machine = describeMachine();
  const dataDir = await mkdtemp(join(tmpdir(), "quarry-bench-fairness-"));
  const quarryBin = options.quarryBin ?? THIS_QUARRY_BIN;
  const server = await startEmbeddedServe(dataDir, quarryBin);
  try {
    const client = gatewayClient(server.url);
    progress(`serving from ${quarryBin} at ${server.url}`);

    // Alone: one warm-up, then three timed, each in a new knowledge base.
    const alone: number[] = [];
    for (let i = 0; i < 4; i++) {
      await client.createKnowledgeBase({ name: `alone-${i}` });
      const done = await uploadAndTrack(client, `alone-${i}`, "small.txt", SMALL_TEXT).ready;
      if (i > 0) alone.push(done.ms);
    }
    const smallAloneMs = alone.sort((a, b) => a - b)[1];
    progress(`small alone: ${alone.join(", ")} ms`);

    await client.createKnowledgeBase({ name: "large" });
    const large = uploadAndTrack(client, "large", "large.txt", oneLineText(options.largeBytes));
    large.ready.catch(() => {});
    await large.vectorizing;
    progress("the large document is vectorizing");

    const behind: (number | null)[] = [];
    for (let i = 0; i < options.smallDocuments; i++) {
      await client.createKnowledgeBase({ name: `behind-${i}` });
      const tracked = uploadAndTrack(client, `behind-${i}`, "small.txt", SMALL_TEXT);
      const done = await Promise.race([tracked.ready, new Promise<undefined>((r) => setTimeout(r, options.timeoutMs))]);
      behind.push(done ? done.ms : null);
      progress(`small behind large: ${done ? `${done.ms} ms` : `not ready after ${options.timeoutMs} ms`}`);
    }

    const largeDocument = (await client.listDocuments({ knowledgeBase: "large" })).documents[0];
    const largeReady = largeDocument?.status === DocumentStatus.READY;
    const vectorizingTotal = /vectorizing \d+\/(\d+) chunks/.exec(large.latest()?.message ?? "");
    const peakRssMiB = server.peakRssMiB();

    const signalled = performance.now();
    server.child.kill("SIGTERM");
    const exit = await Promise.race([server.exited, new Promise<undefined>((r) => setTimeout(r, 120_000))]);
    if (!exit) server.child.kill("SIGKILL");
    return {
      bench: "fairness",
      backend: "embedded",
      quarryBin,
      machine,
      loadAverageEnd: loadAverageNow(),
      large: {
        bytes: options.largeBytes,
        chunks: largeDocument?.chunkCount || (vectorizingTotal ? Number(vectorizingTotal[1]) : null),
        percentWhenSmallDone: largeDocument?.progressPercent ?? null,
        ready: largeReady,
      },
      smallAloneMs,
      smallBehindLargeMs: behind,
      timeoutMs: options.timeoutMs,
      shutdown: exit ? { exitCode: exit.code, signal: exit.signal, ms: Math.round(exit.at - signalled) } : { exitCode: null, signal: null, ms: null },
      peakRssMiB,
    };
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  }
}

export function formatFairnessReport(r: FairnessBenchReport): string {
  const ms = (v: number | null) => (v === null ? `> ${r.timeoutMs / 1000} s (not ready)` : `${(v / 1000).toFixed(1)} s`);
  return [
    `## bench fairness (${r.quarryBin})`,
    "",
    `${r.machine.cpus} × ${r.machine.cpuModel}, load ${r.machine.loadAverage.join(" / ")} → ${r.loadAverageEnd.join(" / ")}`,
    "",
    "| measure | value |",
    "| --- | --- |",
    `| large document | ${(r.large.bytes / 2 ** 20).toFixed(1)} MiB, one line, ${r.large.chunks ?? "?"} chunks |`,
    `| small document alone (median of 3) | ${ms(r.smallAloneMs)} |`,
    `| small documents behind the large one | ${r.smallBehindLargeMs.map(ms).join(", ")} |`,
    `| large document when they were done | ${r.large.ready ? "ready" : `${r.large.percentWhenSmallDone ?? "?"}%`} |`,
    `| SIGTERM → exit (large still in hand) | ${r.shutdown.ms === null ? "did not exit in 120 s (SIGKILL)" : `${(r.shutdown.ms / 1000).toFixed(1)} s, ${r.shutdown.exitCode === null ? `signal ${r.shutdown.signal}` : `code ${r.shutdown.exitCode}`}`} |`,
    `| server peak RSS (VmHWM) | ${r.peakRssMiB ?? "?"} MiB |`,
    "",
  ].join("\n");
}
