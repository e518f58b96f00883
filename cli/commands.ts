// The client commands: each reaches the gateway over Connect and prints for a person.
import { readFile } from "node:fs/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import { ModelChangeState, RetrievalMode, DocumentStatus, type KnowledgeBase, type SearchHit } from "../gen/quarry/common/v1/common_pb.ts";
import type { RetrievalSettings } from "../gen/quarry/answer/v1/answer_pb.ts";
import { UsageError } from "./error-report.ts";
import { describeNotes } from "../client/retrieval-flags.ts";
import { GatewayUnreachableError, type QuarryClient } from "../client/gateway-client.ts";
import { selectFiles } from "./ingest-files.ts";
import { plural, startProgress } from "./ingest-progress.ts";
import { traceLine } from "./trace-line.ts";
import { chooseModelForFiles } from "../client/model-choice.ts";

export const MODES = ["hybrid", "bm25", "vector"] as const;
export type ModeName = (typeof MODES)[number];

export const MODE_BY_NAME: Record<ModeName, RetrievalMode> = {
  hybrid: RetrievalMode.HYBRID,
  bm25: RetrievalMode.BM25,
  vector: RetrievalMode.VECTOR,
};

export async function ensureKnowledgeBase(client: QuarryClient, name: string, out: NodeJS.WritableStream, files: string[] = []): Promise<void> {
  try {
    await client.getKnowledgeBase({ knowledgeBase: name });
  } catch (error) {
    if (!(error instanceof ConnectError && error.code === Code.NotFound)) throw error;
    // The model follows the language of the files being ingested, and the output says why.
    const choice = await chooseModelForFiles(files);
    const { knowledgeBase } = await client.createKnowledgeBase({ name, embeddingModel: choice.model });
    const why = choice.hanShare === undefined ? "" : `; ${Math.round(choice.hanShare * 100)}% of the first files' words are Chinese`;
    out.write(`created knowledge base ${name} with ${knowledgeBase?.embeddingModel}${why}\n`);
  }
}

export interface IngestOptions {
  wait: boolean;
  out: NodeJS.WritableStream;
  /** How often progress lines appear when `out` is not a terminal. */
  progressIntervalMs?: number;
}

export async function ingest(client: QuarryClient, paths: string[], kb: string, options: IngestOptions) {
  const { out } = options;
  // Local mistakes first: a missing path fails before anything is created on the server.
  const { files, skipped, clashes } = await selectFiles(paths, async () => (await client.listReadableFormats({})).formats);
  for (const skip of skipped) out.write(`skipped    ${skip.path}: ${skip.reason}\n`);
  for (const clash of clashes) out.write(`refused    ${clash.path}: ${clash.reason}\n`);
  if (files.length === 0) throw new UsageError(`nothing to ingest in ${paths.join(", ")}: no file of a format Quarry parses`);
  await ensureKnowledgeBase(client, kb, out, files.map((f) => f.path));
  const ids: string[] = [];
  const started = performance.now();
  let failedUploads = clashes.length;
  for (const file of files) {
    const content = await readFile(file.path);
    try {
      const res = await client.uploadDocument({ header: { knowledgeBase: kb, fileName: file.name, mimeType: file.mimeType }, content });
      if (res.unchanged) out.write(`unchanged  ${file.path}\n`);
      else ids.push(res.document!.id);
    } catch (error) {
      // One file refused is reported and the rest go on; a gateway gone away ends the run.
      if (!(error instanceof ConnectError) || error.cause instanceof GatewayUnreachableError) throw error;
      failedUploads++;
      out.write(`rejected   ${file.path}: ${error.rawMessage}\n`);
    }
  }
  const summary = { ready: 0, failed: failedUploads, skipped: skipped.length, seconds: 0 };
  if (!options.wait || ids.length === 0) {
    summary.seconds = (performance.now() - started) / 1000;
    if (skipped.length > 0) out.write(`${plural(skipped.length, "file")} skipped\n`);
    return summary;
  }

  const watched = await followIngestion(client, ids, out, options.progressIntervalMs);
  summary.ready += watched.ready;
  summary.failed += watched.failed;
  summary.seconds = (performance.now() - started) / 1000;
  const skippedNote = skipped.length > 0 ? `, ${skipped.length} skipped` : "";
  out.write(`${summary.ready} ready, ${summary.failed} failed${skippedNote} in ${summary.seconds.toFixed(1)} s\n`);
  return summary;
}

const WATCH_BATCH = 1000;
const RECONNECT_FOR_MS = 60_000;
/** What a connection to a gateway that is going away fails with, before its UNAVAILABLE arrives. */
const CUT_CONNECTION = new Set(["EPIPE", "ECONNRESET"]);

/** Watches the documents until each is ready or failed, with a progress bar, then a line per document. */
export async function followIngestion(client: QuarryClient, ids: string[], out: NodeJS.WritableStream, progressIntervalMs?: number): Promise<{ ready: number; failed: number }> {
  const summary = { ready: 0, failed: 0 };
  const percents = new Map(ids.map((id) => [id, 0]));
  const finished = new Map<string, { file: string; status: DocumentStatus; error: string; chunks: number }>();
  const state = () => ({ done: finished.size, total: ids.length, percentSum: [...percents.values()].reduce((a, b) => a + b, 0), file: "" });
  const progress = startProgress(out, ids.length, { intervalMs: progressIntervalMs });
  // The gateway takes at most 1,000 ids a request (gateway/access/request-limits.ts): larger runs are
  // watched a batch at a time, which loses nothing, since a stream starts from each document's status.
  const batches = Array.from({ length: Math.ceil(ids.length / WATCH_BATCH) }, (_, i) => ids.slice(i * WATCH_BATCH, (i + 1) * WATCH_BATCH));
  for (const batch of batches) {
    // A gateway that stops (a restart, a deploy) ends the stream with UNAVAILABLE; the documents go
    // on in the pipeline, so the watch is taken up again once it answers, for up to a minute.
    let unavailableSince: number | undefined;
    for (;;) {
      try {
        for await (const update of client.watchIngestion({ documentIds: batch.filter((id) => !finished.has(id)) })) {
          unavailableSince = undefined;
          percents.set(update.documentId, update.status === DocumentStatus.FAILED ? 100 : update.percent);
          if (update.status === DocumentStatus.READY || update.status === DocumentStatus.FAILED) {
            finished.set(update.documentId, { file: update.fileName, status: update.status, error: update.error, chunks: update.chunkCount });
          }
          progress.update({ ...state(), file: update.fileName });
        }
        break;
      } catch (error) {
        const restarting =
          error instanceof ConnectError &&
          (error.code === Code.Unavailable || error.cause instanceof GatewayUnreachableError || CUT_CONNECTION.has(String((error.cause as { code?: unknown })?.code)));
        if (!restarting) throw error;
        unavailableSince ??= Date.now();
        if (Date.now() - unavailableSince > RECONNECT_FOR_MS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }
  progress.stop(state());
  for (const doc of finished.values()) {
    if (doc.status === DocumentStatus.READY) {
      summary.ready++;
      out.write(`ready      ${doc.file} (${plural(doc.chunks, "chunk")})\n`);
    } else {
      summary.failed++;
      out.write(`failed     ${doc.file}: ${doc.error}\n`);
    }
  }
  return summary;
}

/** A table with a header; counts carry their unit, in the singular when there is one. */
export async function listKnowledgeBases(client: QuarryClient, out: NodeJS.WritableStream): Promise<void> {
  const { knowledgeBases } = await client.listKnowledgeBases({});
  if (knowledgeBases.length === 0) {
    out.write("no knowledge bases yet; `quarry ingest FOLDER --kb NAME` creates one\n");
    return;
  }
  const rows = [
    ["NAME", "ID", "DOCUMENTS", "CHUNKS", "EMBEDDING MODEL"],
    ...knowledgeBases.map((k) => [k.correctionsForAssistantId ? `${k.name} (corrections of ${k.correctionsForAssistantId})` : k.name, k.id, plural(Number(k.documentCount), "document"), plural(Number(k.chunkCount), "chunk"), modelCell(k)]),
  ];
  writeTable(rows, out);
}

/** Rows (the first a header) in columns two spaces apart; the last column is not padded. */
export function writeTable(rows: string[][], out: NodeJS.WritableStream): void {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  for (const row of rows) out.write(`${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join("  ")}\n`);
}

/** The base's model, and the one it is changing to with the change's progress. */
function modelCell(k: KnowledgeBase): string {
  const c = k.modelChange;
  if (c?.state === ModelChangeState.RUNNING) return `${k.embeddingModel} → ${c.targetModel} (${c.documentsDone}/${c.documentsTotal})`;
  if (c?.state === ModelChangeState.FAILED) return `${k.embeddingModel} (change to ${c.targetModel} failed)`;
  return k.embeddingModel;
}

/** Retrieval options beyond mode and top-k (cli/retrieval-flags.ts). */
type MoreSettings = Partial<Omit<RetrievalSettings, "$typeName" | "mode" | "topK">>;

/** `keep`: hold the question as a conversation (listed, continued by `quarry chat`); else a one-off question that stores nothing. */
export async function ask(
  client: QuarryClient,
  question: string,
  kbs: string[],
  options: { mode?: ModeName; topK?: number; retrieval?: MoreSettings; keep?: boolean; out: NodeJS.WritableStream },
) {
  const { out } = options;
  const citations: { marker: number; fileName: string; page: number; sectionPath: string[]; snippet: string; score: number }[] = [];
  const settings = { ...options.retrieval, mode: MODE_BY_NAME[options.mode ?? "hybrid"], topK: options.topK ?? 0 };
  let conversationId = "";
  let traceId = "";
  let answered = true;
  for await (const { event } of client.chat({ question, knowledgeBases: kbs, settings, oneOff: !options.keep })) {
    const e = event?.event;
    if (e?.case === "started") {
      conversationId = e.value.conversationId;
      traceId = e.value.traceId;
    } else if (e?.case === "text") out.write(e.value.text);
    else if (e?.case === "citation") citations.push(e.value);
    else if (e?.case === "final") {
      out.write("\n\n");
      if (e.value.droppedMarkers) out.write(`(${e.value.droppedMarkers} citation marker(s) matched no source and were removed)\n`);
      out.write(describeNotes(e.value.retrievalNotes));
      answered = e.value.answered;
      if (!answered) out.write(`(not answered: ${e.value.answeredReason})\n`);
    }
  }
  if (citations.length) out.write(sourcesHeading(answered));
  for (const c of citations) {
    const where = [c.fileName, c.page ? `p. ${c.page}` : "", c.sectionPath.join(" > ")].filter(Boolean).join(", ");
    out.write(`  [${c.marker}] ${where} (score ${c.score.toFixed(3)})\n      ${c.snippet.replace(/\s+/g, " ").slice(0, 160)}\n`);
  }
  out.write(await traceLine(client, "trace", traceId));
  if (conversationId) out.write(`conversation ${conversationId} — resume with: quarry chat --conversation ${conversationId}\n`);
  return citations;
}

/** Over an answer's sources; an answer that abstained lists the closest passages, which answer nothing. */
export function sourcesHeading(answered: boolean): string {
  return answered ? "Sources:\n" : "Closest passages, not an answer:\n";
}

/** A hit with the ranks of the lists its mode used: BM25 and vector only for hybrid, where fusion combines them. */
export function formatHit(hit: SearchHit, rank: number, mode: ModeName = "hybrid"): string {
  const c = hit.chunk!;
  const e = hit.explain!;
  const where = [hit.fileName, c.page ? `p. ${c.page}` : "", c.sectionPath.join(" > ")].filter(Boolean).join(", ");
  const bm25 = `bm25 #${e.bm25Rank || "-"} (${e.bm25Score.toFixed(3)})`;
  const chunkVector = `vector #${e.vectorRank || "-"} (${e.vectorScore.toFixed(3)})`;
  // Where the hit's document ranked by its whole vector (bases with document vectors): it explains the vector score.
  const vector = e.documentRank ? `${chunkVector}, document #${e.documentRank} (${e.documentScore.toFixed(3)})` : chunkVector;
  // Convex fusion: the fused score is alpha × the vector's 0–1 score + (1 − alpha) × BM25's.
  const fused =
    e.vectorWeight !== undefined
      ? `fused ${e.fusedScore.toFixed(4)} = ${e.vectorWeight} × vector ${(e.vectorNormalized ?? 0).toFixed(3)} + ${+(1 - e.vectorWeight).toFixed(6)} × bm25 ${(e.bm25Normalized ?? 0).toFixed(3)}`
      : `fused ${e.fusedScore.toFixed(4)}`;
  const lists = [
    mode === "bm25" ? bm25 : mode === "vector" ? vector : `${bm25}, ${vector}, ${fused}`,
    e.rerankScore !== undefined ? `rerank ${e.rerankScore.toFixed(3)}` : "",
    e.fallback ? "fallback (keyword)" : "",
    e.mergedChunkIds.length ? `+${e.mergedChunkIds.length} adjacent chunk(s)` : "",
  ]
    .filter(Boolean)
    .join(", ");
  return `${rank}. ${where}  score ${hit.score.toFixed(4)}\n   ${lists}\n   ${c.text.replace(/\s+/g, " ").slice(0, 200)}\n`;
}

export async function search(client: QuarryClient, query: string, kbs: string[], options: { mode?: ModeName; topK?: number; retrieval?: MoreSettings; out: NodeJS.WritableStream }) {
  const mode = options.mode ?? "hybrid";
  const res = await client.search({ query, knowledgeBases: kbs, settings: { ...options.retrieval, mode: MODE_BY_NAME[mode], topK: options.topK ?? 0 } });
  options.out.write(describeNotes(res.notes));
  res.hits.forEach((hit, i) => options.out.write(formatHit(hit, i + 1, mode)));
  options.out.write(`${plural(res.hits.length, "hit")} in ${res.tookMs.toFixed(1)} ms\n`);
  return res.hits;
}
