// bench resume: does a large document's embedding survive being stopped? A one-line document is
// uploaded to an embedded `quarry serve` whose embedder is an OpenAI-compatible endpoint (the local
// stub server, paced like a real one), and while it embeds the server is stopped with SIGTERM and
// with kill -9, each time started again on the same data folder. Every text the endpoint was sent
// is counted, so the report says how often each chunk was embedded (the goal: at most twice) and
// whether the document ended READY with all its chunks.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayClient } from "../client/gateway-client.ts";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import { startOpenAiStub } from "../lib/testing/openai-stub.ts";
import { oneLineText } from "./bench-fairness.ts";
import { describeMachine, type MachineInfo } from "./machine.ts";
import { startQuarryProcess, THIS_QUARRY_BIN, type QuarryProcess } from "./quarry-process.ts";

export type Interruption = "SIGTERM" | "SIGKILL";

export interface ResumeBenchOptions {
  largeBytes: number;
  /** In order; each lands once the endpoint has been sent the next share of the chunks. */
  interruptions: Interruption[];
  /** The stub endpoint's pause per request, ms: paces embedding so that the interruptions land inside it. */
  embeddingDelayMs: number;
  timeoutMs: number;
  quarryBin?: string;
  progress?(line: string): void;
}

export interface InterruptionRecord {
  signal: Interruption;
  /** Distinct chunk texts the endpoint had been sent when the signal went. */
  embeddedBefore: number;
  /** How the process ended, and how long after the signal, ms. */
  exit: { code: number | null; signal: string | null; ms: number };
}

export interface ResumeBenchReport {
  bench: "resume";
  backend: "embedded";
  machine: MachineInfo;
  largeBytes: number;
  status: string;
  error: string;
  chunks: number;
  interruptions: InterruptionRecord[];
  /** Texts sent to the endpoint, by how many times each was sent. */
  timesEmbedded: Record<string, number>;
  /** The most times one text was sent. */
  maxTimesEmbedded: number;
  /** Texts sent in total ÷ the document's chunks. */
  sentPerChunk: number;
  wallMs: number;
}

const DIMENSION = 384;
const EMBEDDING_FROM = 40;
const EMBEDDING_TO = 90;

export async function runResumeBench(options: ResumeBenchOptions): Promise<ResumeBenchReport> {
  const progress = options.progress ?? (() => {});
  const started = performance.now();
  const stub = await startOpenAiStub({ embeddingDimension: DIMENSION, embeddingDelayMs: options.embeddingDelayMs });
  const dataDir = await mkdtemp(join(tmpdir(), "quarry-bench-resume-"));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    QUARRY_DATA_DIR: dataDir,
    QUARRY_PORT: "0",
    QUARRY_HOST: "127.0.0.1",
    QUARRY_EMBEDDING_PROVIDER: "openai",
    QUARRY_EMBEDDING_BASE_URL: stub.url,
    QUARRY_EMBEDDING_MODEL: "stub-embedding",
    QUARRY_EMBEDDING_DIMENSION: String(DIMENSION),
    // The chunker's limits as the caller set them (a loaded machine may need a longer QUARRY_CHUNK_TIMEOUT_MS).
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("QUARRY_CHUNK_"))),
  };
  const start = () => startQuarryProcess(["serve"], env, options.quarryBin ?? THIS_QUARRY_BIN);
  const sent = new Map<string, number>();
  let counted = 0;
  // The stub records every request as it arrives, so a batch cut off by a kill still counts.
  const countSent = () => {
    for (; counted < stub.requests.length; counted++) {
      const request = stub.requests[counted];
      if (request.path !== "/v1/embeddings") continue;
      const input: unknown = request.body?.input;
      for (const text of typeof input === "string" ? [input] : Array.isArray(input) ? input : []) sent.set(text, (sent.get(text) ?? 0) + 1);
    }
    return sent.size;
  };
  let server: QuarryProcess | undefined = await start();
  try {
    let client = gatewayClient(server.url);
    await client.createKnowledgeBase({ name: "resume" });
    const content = new TextEncoder().encode(oneLineText(options.largeBytes));
    const documentId = (await client.uploadDocument({ header: { knowledgeBase: "resume", fileName: "large.txt" }, content })).document!.id;
    progress(`uploaded ${(options.largeBytes / 2 ** 20).toFixed(1)} MiB as ${documentId} to ${server.url}`);
    const deadline = Date.now() + options.timeoutMs;
    const document = async () => (await client.getDocument({ documentId })).document!;
    const interruptions: InterruptionRecord[] = [];
    for (const [i, signal] of options.interruptions.entries()) {
      // Embedding reports 40% to 90% as its batches finish: the signals share that span evenly.
      const due = EMBEDDING_FROM + ((EMBEDDING_TO - EMBEDDING_FROM) * (i + 1)) / (options.interruptions.length + 1);
      for (;;) {
        if (Date.now() > deadline) throw new Error(`the ${signal} #${i + 1} was never due within the timeout`);
        const current = await document();
        if (current.status === DocumentStatus.READY || current.status === DocumentStatus.FAILED) {
          const why = current.status === DocumentStatus.FAILED ? `FAILED (${current.errorMessage})` : "READY: pace the embedder slower (--delay-ms)";
          throw new Error(`the document was ${why} before interruption #${i + 1}`);
        }
        if (current.status === DocumentStatus.EMBEDDING && current.progressPercent >= due) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const embeddedBefore = countSent();
      const signalled = performance.now();
      server.child.kill(signal);
      const exit = await server.exited;
      interruptions.push({ signal, embeddedBefore, exit: { code: exit.code, signal: exit.signal, ms: Math.round(exit.at - signalled) } });
      progress(`${signal} #${i + 1} after ${embeddedBefore} texts sent; exited in ${Math.round(exit.at - signalled)} ms`);
      server = undefined;
      server = await start();
      client = gatewayClient(server.url);
    }
    let last = await document();
    while (last.status !== DocumentStatus.READY && last.status !== DocumentStatus.FAILED) {
      if (Date.now() > deadline) throw new Error(`not ready within the timeout (${DocumentStatus[last.status]}, ${countSent()} texts sent)`);
      await new Promise((r) => setTimeout(r, 250));
      last = await document();
    }
    countSent();
    // The document's own vector (a text of its own, embedded beside the chunks) is counted like one.
    const timesEmbedded: Record<string, number> = {};
    let total = 0;
    for (const times of sent.values()) {
      timesEmbedded[times] = (timesEmbedded[times] ?? 0) + 1;
      total += times;
    }
    return {
      bench: "resume",
      backend: "embedded",
      machine: describeMachine(),
      largeBytes: options.largeBytes,
      status: DocumentStatus[last.status],
      error: last.errorMessage,
      chunks: last.chunkCount,
      interruptions,
      timesEmbedded,
      maxTimesEmbedded: Math.max(0, ...sent.values()),
      sentPerChunk: last.chunkCount ? Math.round((total / last.chunkCount) * 1000) / 1000 : 0,
      wallMs: Math.round(performance.now() - started),
    };
  } finally {
    if (server) {
      server.child.kill("SIGTERM");
      const exited = await Promise.race([server.exited, new Promise<undefined>((r) => setTimeout(r, 60_000))]);
      if (!exited) server.child.kill("SIGKILL");
    }
    await stub.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export function formatResumeReport(r: ResumeBenchReport): string {
  const rows = r.interruptions.map(
    (x, i) => `| ${i + 1} | ${x.signal} | ${x.embeddedBefore} | ${x.exit.signal ?? `code ${x.exit.code}`} | ${x.exit.ms} ms |`,
  );
  const times = Object.entries(r.timesEmbedded)
    .map(([times, texts]) => `${texts} sent ${times}×`)
    .join(", ");
  return [
    `## bench resume`,
    "",
    `${r.machine.cpus} × ${r.machine.cpuModel}, load ${r.machine.loadAverage.join(" / ")}; wall ${(r.wallMs / 1000).toFixed(0)} s`,
    "",
    `A ${(r.largeBytes / 2 ** 20).toFixed(1)} MiB one-line document: **${r.status}**${r.error ? ` (${r.error})` : ""} with ${r.chunks} chunks.`,
    "",
    "| # | signal | distinct texts sent before | exit | exit after |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `Texts sent to the embedding endpoint: ${times}; at most **${r.maxTimesEmbedded}×** one text (goal ≤ 2); ${r.sentPerChunk} sent per chunk.`,
    "",
  ].join("\n");
}
