// bench soak: N generated documents uploaded while faults are injected into the Quarry that ingests
// them (embedded: the server killed -9 and restarted; distributed: a service killed -9, the Kafka
// broker restarted, OpenSearch stopped), then concurrent chat streams for a fixed time. It stops by
// itself and reports the ledger (soak-accounting.ts): READY, FAILED with the reason, lost, chunks
// stored twice or not as the chunker cut them, and the chat streams' errors and time to first event.
//
// The faults fire as ingestion moves on: fault i of K once i/(K+1) of the N documents have reached
// the embedding stage (or gone past it), so each lands while chunks are being embedded and
// written — the vectorizing stage joins many documents into one pass, so small documents become
// READY in waves, and a mark on READY alone can fall between waves or after the last. Each
// fault's moment is reported (uploads acknowledged, documents embedding or further, terminal).
// An upload that fails while its server is away is sent again (same name, same bytes), as a
// person's client would, until --retry-for passes; a document counts as submitted only once an
// upload of it was acknowledged.
import type { QuarryClient } from "../client/gateway-client.ts";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import type { ChatResponse } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import { describeMachine, loadAverageNow, machineLine, type MachineInfo } from "./machine.ts";
import { summarize, type LatencySummary } from "./percentiles.ts";
import { accountSoak, type CatalogEntry, type SoakAccount, type StoredChunk, type SubmittedDocument } from "./soak-accounting.ts";
import type { SoakTarget } from "./soak-target.ts";
import { seededRandom } from "./synthetic-corpus.ts";

export interface SoakOptions {
  documents: number;
  /** Uploads in flight at once. */
  uploadConcurrency: number;
  chatStreams: number;
  chatDurationMs: number;
  /** Longest wait, after the last upload and fault, for every document to reach a terminal state. */
  settleTimeoutMs: number;
  /** How long a failing upload is retried (the server may be away for a fault). */
  retryForMs: number;
  seed: number;
  progress?(line: string): void;
}

export interface SoakFaultRecord {
  name: string;
  /** Acknowledged uploads, documents at the embedding stage or past it, and terminal documents when it fired. */
  atAcknowledged: number;
  atEmbedding: number;
  atTerminal: number;
  downMs: number;
}

export interface SoakReport {
  bench: "soak";
  backend: "embedded" | "distributed";
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  settings: Omit<SoakOptions, "progress">;
  faults: SoakFaultRecord[];
  ingest: { seconds: number; uploadRetries: number; unacknowledged: string[]; storedChunks: number; expectedChunks: number };
  account: SoakAccount;
  /** FAILED documents grouped by reason. */
  failedReasons: { reason: string; documents: number }[];
  chat: { streams: number; errors: number; errorSamples: string[]; firstEvent: LatencySummary | null; complete: LatencySummary | null };
}

/** What the report was computed from, for a test to tamper with and count again. */
export interface SoakFacts {
  knowledgeBaseId: string;
  submitted: SubmittedDocument[];
  catalog: CatalogEntry[];
  chunks: StoredChunk[];
}

const VOCABULARY = (
  "granite basalt quarry harbour ferry lantern copper meadow orchard tunnel river signal ember marble chisel " +
  "crane barge tide beacon ledger mason kiln slate gravel cable winch pulley anvil forge timber canal lock " +
  "survey fossil mineral seam vein drill blast dust wagon rail depot storm winter summer harvest market guild"
).split(" ");
const FILLER = "the of and to in is that for it as with was on by at from which has its when".split(" ");

/** A seeded plain-text document of 1–8 paragraphs; each names its own number, so questions can find it. */
export function soakDocument(index: number, seed: number): string {
  const random = seededRandom(seed * 100_003 + index);
  const pick = (words: string[]) => words[Math.floor(random() * words.length)];
  const paragraphs: string[] = [];
  const count = 1 + Math.floor(random() * 8);
  for (let p = 0; p < count; p++) {
    const words = [`Record ${index}, part ${p + 1}:`];
    const length = 30 + Math.floor(random() * 40);
    for (let w = 0; w < length; w++) words.push(random() < 0.6 ? pick(VOCABULARY) : pick(FILLER));
    paragraphs.push(`${words.join(" ")}.`);
  }
  return paragraphs.join("\n\n");
}

const fileName = (i: number) => `soak-${String(i).padStart(5, "0")}.txt`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSoak(target: SoakTarget, options: SoakOptions): Promise<{ report: SoakReport; facts: SoakFacts }> {
  const progress = options.progress ?? (() => {});
  const machine = describeMachine();
  const client = target.client;
  const { knowledgeBase } = await client.createKnowledgeBase({ name: `soak-${Date.now().toString(36)}` });
  const kb = knowledgeBase!;
  const contents = Array.from({ length: options.documents }, (_, i) => new TextEncoder().encode(soakDocument(i, options.seed)));

  // The chunker's own count for each document, with the knowledge base's settings, before any fault.
  const expected: number[] = [];
  for (let i = 0; i < contents.length; i++) {
    const preview = await client.previewChunks({ fileName: fileName(i), content: contents[i], knowledgeBase: kb.id, maxChunks: 1 });
    expected.push(preview.totalChunks);
  }
  progress(`${options.documents} documents, ${expected.reduce((a, b) => a + b, 0)} chunks by the chunker's count`);

  const started = performance.now();
  const acknowledged = new Set<number>();
  const unacknowledged: string[] = [];
  let uploadRetries = 0;
  let next = 0;
  const uploader = async () => {
    for (;;) {
      const i = next++;
      if (i >= contents.length) return;
      const giveUpAt = performance.now() + options.retryForMs;
      for (;;) {
        try {
          await client.uploadDocument({ header: { knowledgeBase: kb.id, fileName: fileName(i) }, content: contents[i] }, { timeoutMs: 60_000 });
          acknowledged.add(i);
          break;
        } catch (error) {
          if (performance.now() > giveUpAt) {
            unacknowledged.push(`${fileName(i)}: ${(error as Error).message}`);
            break;
          }
          uploadRetries++;
          await sleep(1_000);
        }
      }
    }
  };
  const uploads = Promise.all(Array.from({ length: options.uploadConcurrency }, uploader));
  let uploadsDone = false;
  void uploads.finally(() => (uploadsDone = true));

  // Follow the catalog; fire the faults at their moments; stop once everything acknowledged is terminal.
  // WatchIngestion wakes the loop the moment a document finishes, so a fault lands at its mark even
  // when small documents finish faster than the catalog is polled; the poll is the ground truth.
  const watched = new Set<string>();
  const watchedEmbedding = new Set<string>();
  let wake: (() => void) | undefined;
  const stopWatching = new AbortController();
  const watcher = (async () => {
    while (!stopWatching.signal.aborted) {
      try {
        for await (const update of client.watchIngestion({ knowledgeBase: kb.id }, { signal: stopWatching.signal })) {
          if (update.status >= DocumentStatus.EMBEDDING) {
            watchedEmbedding.add(update.fileName);
            if (update.status === DocumentStatus.READY || update.status === DocumentStatus.FAILED) watched.add(update.fileName);
            wake?.();
          }
        }
      } catch {
        // the server is away for a fault, or the watch was stopped: watch again
      }
      await sleep(500);
    }
  })();
  let polled = 0;
  let polledEmbedding = 0;
  let polledAt = Number.NEGATIVE_INFINITY;
  const poll = async (): Promise<void> => {
    try {
      const { documents } = await client.listDocuments({ knowledgeBase: kb.id }, { timeoutMs: 30_000 });
      polled = documents.filter((d) => d.status === DocumentStatus.READY || d.status === DocumentStatus.FAILED).length;
      polledEmbedding = documents.filter((d) => d.status >= DocumentStatus.EMBEDDING).length;
    } catch {
      // away for a fault: the last count stands
    }
    polledAt = performance.now();
  };
  const faults: SoakFaultRecord[] = [];
  const total = target.faults.length;
  let deadline = Number.POSITIVE_INFINITY;
  let terminal = 0;
  for (;;) {
    if (performance.now() - polledAt >= 1_000) await poll();
    terminal = Math.max(polled, watched.size);
    const embedding = Math.max(polledEmbedding, watchedEmbedding.size);
    if (faults.length < total && embedding >= ((faults.length + 1) / (total + 1)) * options.documents) {
      const fault = target.faults[faults.length];
      const record = { name: fault.name, atAcknowledged: acknowledged.size, atEmbedding: embedding, atTerminal: terminal, downMs: 0 };
      progress(`fault ${faults.length + 1}/${total} at ${acknowledged.size} acknowledged, ${embedding} embedding or further, ${terminal} terminal: ${fault.name}`);
      record.downMs = (await fault.inject()).downMs;
      progress(`  back after ${(record.downMs / 1000).toFixed(1)} s`);
      faults.push(record);
      continue;
    }
    if (uploadsDone) {
      if (deadline === Number.POSITIVE_INFINITY) deadline = performance.now() + options.settleTimeoutMs;
      if ((faults.length === total && polled >= acknowledged.size) || performance.now() > deadline) break;
    }
    await Promise.race([sleep(1_000), new Promise<void>((r) => (wake = r))]);
  }
  stopWatching.abort();
  await watcher;
  terminal = polled;
  await uploads;
  const ingestSeconds = Math.round((performance.now() - started) / 100) / 10;
  progress(`ingestion settled after ${ingestSeconds} s: ${terminal} of ${acknowledged.size} acknowledged documents terminal`);

  const chat = await chatPhase(client, kb.id, options, progress);

  const { documents } = await client.listDocuments({ knowledgeBase: kb.id });
  const catalog: CatalogEntry[] = documents.map((d) => ({ documentId: d.id, fileName: d.fileName, status: d.status, error: d.errorMessage, chunkCount: d.chunkCount }));
  const chunks = await target.readChunks(kb.id);
  const submitted = [...acknowledged].sort((a, b) => a - b).map((i) => ({ fileName: fileName(i), expectedChunks: expected[i] }));
  const account = accountSoak(submitted, catalog, chunks);
  const reasons = new Map<string, number>();
  for (const f of account.failed) reasons.set(f.reason, (reasons.get(f.reason) ?? 0) + 1);

  const report: SoakReport = {
    bench: "soak",
    backend: target.backend,
    machine,
    loadAverageEnd: loadAverageNow(),
    settings: {
      documents: options.documents,
      uploadConcurrency: options.uploadConcurrency,
      chatStreams: options.chatStreams,
      chatDurationMs: options.chatDurationMs,
      settleTimeoutMs: options.settleTimeoutMs,
      retryForMs: options.retryForMs,
      seed: options.seed,
    },
    faults,
    ingest: { seconds: ingestSeconds, uploadRetries, unacknowledged, storedChunks: chunks.length, expectedChunks: submitted.reduce((sum, d) => sum + d.expectedChunks, 0) },
    account,
    failedReasons: [...reasons].map(([reason, n]) => ({ reason, documents: n })),
    chat,
  };
  return { report, facts: { knowledgeBaseId: kb.id, submitted, catalog, chunks } };
}

async function chatPhase(client: QuarryClient, knowledgeBaseId: string, options: SoakOptions, progress: (line: string) => void): Promise<SoakReport["chat"]> {
  const random = seededRandom(options.seed + 7);
  const firstEvent: number[] = [];
  const complete: number[] = [];
  const errorSamples: string[] = [];
  let streams = 0;
  let errors = 0;
  const endAt = performance.now() + options.chatDurationMs;
  const stream = async () => {
    while (performance.now() < endAt) {
      const record = Math.floor(random() * options.documents);
      const question = `What does record ${record} say about ${VOCABULARY[Math.floor(random() * VOCABULARY.length)]} and ${VOCABULARY[Math.floor(random() * VOCABULARY.length)]}?`;
      const started = performance.now();
      let first = Number.NaN;
      let final = false;
      streams++;
      try {
        for await (const response of client.chat({ question, knowledgeBases: [knowledgeBaseId] }, { signal: AbortSignal.timeout(120_000) })) {
          if (Number.isNaN(first)) first = performance.now() - started;
          if ((response as ChatResponse).event?.event.case === "final") final = true;
        }
        if (!final) throw new Error("the stream ended without its final event");
        firstEvent.push(first);
        complete.push(performance.now() - started);
      } catch (error) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push((error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: options.chatStreams }, stream));
  progress(`chat: ${streams} streams from ${options.chatStreams} concurrent clients, ${errors} errors`);
  return {
    streams,
    errors,
    errorSamples,
    firstEvent: firstEvent.length > 0 ? round(summarize(firstEvent)) : null,
    complete: complete.length > 0 ? round(summarize(complete)) : null,
  };
}

function round(s: LatencySummary): LatencySummary {
  const r = (x: number) => Math.round(x * 10) / 10;
  return { count: s.count, p50: r(s.p50), p95: r(s.p95), p99: r(s.p99), mean: r(s.mean), max: r(s.max) };
}

export function formatSoakReport(r: SoakReport): string {
  const a = r.account;
  const goal = (value: number) => (value === 0 ? "0 (met)" : `**${value}** (goal 0: missed)`);
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const ms = (s: LatencySummary | null, key: "p50" | "p95") => (s ? `${Math.round(s[key])} ms` : "n/a");
  return [
    `### bench soak — ${r.backend}`,
    "",
    `Machine: ${machineLine(r.machine)}; load at the end ${r.loadAverageEnd.join(" / ")}.`,
    "",
    "Faults, in order (when: acknowledged uploads / documents at the embedding stage or past it / documents in a terminal state, of " + `${r.settings.documents}):`,
    "",
    ...r.faults.map((f, i) => `${i + 1}. ${f.name} — at ${f.atAcknowledged} / ${f.atEmbedding} / ${f.atTerminal}; away ${seconds(f.downMs)}`),
    "",
    "| measure | value |",
    "| --- | --- |",
    `| documents submitted (upload acknowledged) | ${a.submitted} of ${r.settings.documents}${r.ingest.unacknowledged.length ? ` (**${r.ingest.unacknowledged.length} never acknowledged**)` : ""} |`,
    `| upload retries while the server was away | ${r.ingest.uploadRetries} |`,
    `| READY | ${a.ready} |`,
    `| FAILED, with reason | ${a.failed.length}${r.failedReasons.map((f) => `; ${f.documents} × "${f.reason}"`).join("")} |`,
    `| lost (not in the catalog, or never terminal) | ${goal(a.lost.length)} |`,
    `| chunk rows stored twice (same document + ordinal) | ${goal(a.duplicateRows)} |`,
    `| READY documents whose stored or catalog chunk count ≠ the chunker's | ${goal(a.countMismatches.length)} |`,
    `| chunk rows of no READY document (old versions, failed ones) | ${a.orphanRows} |`,
    `| chunks stored / expected by the chunker | ${r.ingest.storedChunks} / ${r.ingest.expectedChunks} |`,
    `| ingestion, first upload → all terminal | ${r.ingest.seconds} s |`,
    `| chat streams (${r.settings.chatStreams} concurrent for ${seconds(r.settings.chatDurationMs)}) | ${r.chat.streams} |`,
    `| chat stream errors | ${goal(r.chat.errors)}${r.chat.errorSamples.length ? ` — e.g. ${r.chat.errorSamples.map((e) => `"${e}"`).join(", ")}` : ""} |`,
    `| time to first event p50 / p95 | ${ms(r.chat.firstEvent, "p50")} / ${ms(r.chat.firstEvent, "p95")} |`,
    `| time to the final event p50 / p95 | ${ms(r.chat.complete, "p50")} / ${ms(r.chat.complete, "p95")} |`,
    ...(a.lost.length ? ["", `Lost: ${a.lost.slice(0, 10).map((l) => `${l.fileName} (${l.why})`).join("; ")}${a.lost.length > 10 ? "; …" : ""}`] : []),
    ...(a.countMismatches.length
      ? ["", `Count mismatches: ${a.countMismatches.slice(0, 10).map((m) => `${m.fileName} expected ${m.expected}, stored ${m.stored}, catalog ${m.catalog}`).join("; ")}`]
      : []),
    "",
  ].join("\n");
}

/** Whether the soak met its goals: nothing lost, nothing stored twice or miscounted, no stream error. */
export function soakPassed(r: SoakReport): boolean {
  return r.account.lost.length === 0 && r.account.duplicateRows === 0 && r.account.countMismatches.length === 0 && r.chat.errors === 0 && r.ingest.unacknowledged.length === 0;
}
