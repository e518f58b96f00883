// Runs fuzz inputs through a live Quarry and judges each outcome: PreviewChunks either returns
// chunks or fails with a code that blames the input (invalid_argument, failed_precondition,
// resource_exhausted) and a reason a person can read; an upload is either refused the same way or
// ends READY or FAILED with such a reason, at once rather than after redrives meant for a backend
// that is down. Anything else (internal, unavailable, a stack trace, a document stuck or lost) is
// a problem the report lists with the input's index, so it can be rebuilt from the seed.
import { Code, ConnectError } from "@connectrpc/connect";
import type { QuarryClient } from "../client/gateway-client.ts";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import { RETRYING_MARK } from "../lib/domain.ts";
import type { FuzzInput } from "./fuzz-inputs.ts";

export interface FuzzOutcome {
  index: number;
  kind: string;
  fileName: string;
  /** "ok" (chunks) or the Connect code's name. */
  preview: string;
  /** READY, FAILED, or REFUSED (the upload call itself failed). */
  ingest: string;
  /** The preview's or the ingestion's reason, when one failed. */
  reason?: string;
  problems: string[];
}

const INPUT_CODES = new Set([Code.InvalidArgument, Code.FailedPrecondition, Code.ResourceExhausted]);

/** A reason a person can act on: says something, is not a stack trace, a placeholder or a wall of text. */
export function readableReason(reason: string | undefined): boolean {
  if (!reason || reason.trim().length < 8 || reason.length > 1_000) return false;
  return !/\n\s+at |internal error|\[object |undefined|^Error$/.test(reason);
}

export interface FuzzRunOptions {
  client: QuarryClient;
  knowledgeBase: string;
  inputs: Iterable<FuzzInput>;
  /** Uploads in flight before waiting for them to finish. */
  batchSize?: number;
  /** Inputs previewed and uploaded at once. */
  concurrency?: number;
  /** How long one batch may take to become final before its stragglers count as stuck. */
  batchTimeoutMs?: number;
  progress?(done: number): void;
}

export async function runFuzz(options: FuzzRunOptions): Promise<FuzzOutcome[]> {
  const { client } = options;
  const outcomes: FuzzOutcome[] = [];
  let batch: FuzzOutcome[] = [];
  const ids = new Map<string, FuzzOutcome>();
  const flush = async () => {
    await awaitFinal(client, ids, options.batchTimeoutMs ?? 300_000);
    outcomes.push(...batch);
    options.progress?.(outcomes.length);
    batch = [];
    ids.clear();
  };
  // A few inputs at a time, as several users would send them; each is previewed, then uploaded.
  const concurrency = options.concurrency ?? 4;
  let group: FuzzInput[] = [];
  const runGroup = async () => {
    await Promise.all(group.map((input) => judgeInput(options, input, batch, ids)));
    group = [];
  };
  for (const input of options.inputs) {
    group.push(input);
    if (group.length >= concurrency) await runGroup();
    if (batch.length >= (options.batchSize ?? 40)) await flush();
  }
  await runGroup();
  await flush();
  return outcomes.sort((a, b) => a.index - b.index);
}

async function judgeInput(options: FuzzRunOptions, input: FuzzInput, batch: FuzzOutcome[], ids: Map<string, FuzzOutcome>): Promise<void> {
  const outcome: FuzzOutcome = { index: input.index, kind: input.kind, fileName: input.fileName, preview: "", ingest: "", problems: [] };
  batch.push(outcome);
  await preview(options.client, input, outcome);
  try {
    const header = { knowledgeBase: options.knowledgeBase, fileName: input.fileName, mimeType: input.mimeType };
    const { document } = await options.client.uploadDocument({ header, content: input.content });
    ids.set(document!.id, outcome);
  } catch (error) {
    outcome.ingest = "REFUSED";
    judgeError(error, outcome, "upload");
  }
}

async function preview(client: QuarryClient, input: FuzzInput, outcome: FuzzOutcome): Promise<void> {
  try {
    const res = await client.previewChunks({ fileName: input.fileName, content: input.content, mimeType: input.mimeType, maxChunks: 3 });
    outcome.preview = "ok";
    if (res.totalChunks === 0) outcome.problems.push("preview: no chunks and no error");
  } catch (error) {
    judgeError(error, outcome, "preview");
    outcome.preview = error instanceof ConnectError ? Code[error.code] : "not a ConnectError";
  }
}

function judgeError(error: unknown, outcome: FuzzOutcome, where: string): void {
  if (!(error instanceof ConnectError)) {
    outcome.problems.push(`${where}: ${String(error)}`);
    return;
  }
  outcome.reason ??= error.rawMessage;
  if (!INPUT_CODES.has(error.code)) outcome.problems.push(`${where}: ${Code[error.code]} (${error.rawMessage})`);
  else if (!readableReason(error.rawMessage)) outcome.problems.push(`${where}: unreadable reason "${error.rawMessage}"`);
}

/** Follows WatchIngestion until every uploaded document is READY or finally FAILED. */
async function awaitFinal(client: QuarryClient, ids: Map<string, FuzzOutcome>, timeoutMs: number): Promise<void> {
  if (ids.size === 0) return;
  const last = new Map<string, { status: DocumentStatus; error: string }>();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    for await (const update of client.watchIngestion({ documentIds: [...ids.keys()] }, { signal })) {
      last.set(update.documentId, { status: update.status, error: update.error });
    }
  } catch (error) {
    // Past the time limit the stragglers are reported below; any other failure of the watch is the run's.
    if (!signal.aborted) throw error;
  }
  for (const [id, outcome] of ids) {
    const final = last.get(id);
    if (!final) {
      outcome.ingest = "LOST";
      outcome.problems.push("ingest: no status within the time limit");
    } else if (final.status === DocumentStatus.READY) {
      outcome.ingest = "READY";
    } else if (final.status === DocumentStatus.FAILED) {
      outcome.ingest = "FAILED";
      outcome.reason ??= final.error;
      if (final.error.includes(RETRYING_MARK) || /gave up after/.test(final.error)) outcome.problems.push(`ingest: retried as if a backend were down (${final.error})`);
      else if (!readableReason(final.error)) outcome.problems.push(`ingest: unreadable reason "${final.error}"`);
    } else {
      outcome.ingest = DocumentStatus[final.status];
      outcome.problems.push(`ingest: stuck at ${DocumentStatus[final.status]}`);
    }
  }
}

/** Counts per kind and outcome, for the report. */
export function summarize(outcomes: FuzzOutcome[]) {
  const byKind = new Map<string, { inputs: number; previewOk: number; ready: number; failed: number; refused: number; problems: number }>();
  for (const o of outcomes) {
    const row = byKind.get(o.kind) ?? { inputs: 0, previewOk: 0, ready: 0, failed: 0, refused: 0, problems: 0 };
    row.inputs++;
    if (o.preview === "ok") row.previewOk++;
    if (o.ingest === "READY") row.ready++;
    if (o.ingest === "FAILED") row.failed++;
    if (o.ingest === "REFUSED") row.refused++;
    if (o.problems.length > 0) row.problems++;
    byKind.set(o.kind, row);
  }
  return byKind;
}
