// What the system tests share: uploads both ways, collecting an ingestion watch and a chat stream,
// and the checks that tie a citation back to the file it came from. The files themselves are the
// repository's fixtures (test/fixtures).
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { expect } from "vitest";
import { ConnectError } from "@connectrpc/connect";
import type { Citation } from "../../gen/quarry/common/v1/common_pb.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import type { ChatFinal, ChatStatus } from "../../gen/quarry/answer/v1/answer_pb.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ChatRequestSchema, WatchIngestionResponse } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";

/** Collapses every run of whitespace to one space, as the citation snippets do. */
export function flat(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The ConnectError a call fails with; fails the test if the call succeeds. */
export async function failure(call: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    return error as ConnectError;
  }
  throw new Error("the call succeeded but should have failed");
}

export async function upload(client: QuarryClient, kb: string, fileName: string, content: Uint8Array, mimeType = "") {
  return client.uploadDocument({ header: { knowledgeBase: kb, fileName, mimeType }, content });
}

/** The client-streaming upload: the header first, then the bytes in pieces of `pieceBytes`. */
export async function uploadStreamed(client: QuarryClient, kb: string, fileName: string, content: Uint8Array, pieceBytes = 4096) {
  async function* parts() {
    yield { part: { case: "header" as const, value: { knowledgeBase: kb, fileName } } };
    for (let at = 0; at < content.byteLength; at += pieceBytes) {
      yield { part: { case: "content" as const, value: content.subarray(at, at + pieceBytes) } };
    }
  }
  return client.uploadDocumentStream(parts());
}

export type WatchLog = Map<string, WatchIngestionResponse[]>;

/** Every update WatchIngestion sends for these documents, by document, until the stream ends. */
export async function watchAll(client: QuarryClient, documentIds: string[], timeoutMs = 150_000): Promise<WatchLog> {
  const log: WatchLog = new Map(documentIds.map((id) => [id, []]));
  for await (const update of client.watchIngestion({ documentIds }, { signal: AbortSignal.timeout(timeoutMs) })) {
    expect(log.has(update.documentId), `an update for a document nobody watched: ${update.documentId}`).toBe(true);
    log.get(update.documentId)!.push(update);
  }
  return log;
}

export const lastUpdate = (log: WatchLog, id: string) => log.get(id)!.at(-1)!;

const PHASE_ORDER = [
  DocumentStatus.PENDING,
  DocumentStatus.PARSING,
  DocumentStatus.CHUNKING,
  DocumentStatus.EMBEDDING,
  DocumentStatus.INDEXING,
  DocumentStatus.READY,
];

/** The percent each phase may report: pending 0 (1 once submitted), parsing 10, chunking 30, embedding 40–90, indexing 95, ready 100. */
function percentFits(status: DocumentStatus, percent: number): boolean {
  switch (status) {
    case DocumentStatus.PENDING:
      return percent === 0 || percent === 1;
    case DocumentStatus.PARSING:
      return percent === 10;
    case DocumentStatus.CHUNKING:
      return percent === 30;
    case DocumentStatus.EMBEDDING:
      return percent >= 40 && percent <= 90;
    case DocumentStatus.INDEXING:
      return percent === 95;
    case DocumentStatus.READY:
      return percent === 100;
    default:
      return false;
  }
}

/** A successful document's updates: phases never go back, percents never drop, and it ends ready. */
export function expectOrderedProgressToReady(updates: WatchIngestionResponse[], label: string): void {
  expect(updates.length, `${label}: no updates at all`).toBeGreaterThan(0);
  let phase = -1;
  let percent = -1;
  for (const u of updates) {
    const at = PHASE_ORDER.indexOf(u.status);
    const where = `${label}: ${DocumentStatus[u.status]} ${u.percent}% after phase ${PHASE_ORDER[phase] !== undefined ? DocumentStatus[PHASE_ORDER[phase]] : "-"} ${percent}%`;
    expect(at, `${where} (a status outside the success path)`).toBeGreaterThanOrEqual(0);
    expect(at, `${where} (phase went back)`).toBeGreaterThanOrEqual(phase);
    expect(u.percent, `${where} (percent dropped)`).toBeGreaterThanOrEqual(percent);
    expect(percentFits(u.status, u.percent), `${where} (percent outside the phase's range)`).toBe(true);
    phase = at;
    percent = u.percent;
  }
  const last = updates.at(-1)!;
  expect(last.status, `${label} ended ${DocumentStatus[last.status]}: ${last.error}`).toBe(DocumentStatus.READY);
  expect(last.percent).toBe(100);
  expect(last.error).toBe("");
}

export interface ChatResult {
  text: string;
  citations: Citation[];
  final: ChatFinal;
  statuses: ChatStatus[];
  /** The event kinds in arrival order, to check that final comes last. */
  order: string[];
  /** The started event's turn id ("" for a one-off chat), to read the turn's provenance. */
  turnId: string;
}

export async function collectChat(client: QuarryClient, request: MessageInitShape<typeof ChatRequestSchema>): Promise<ChatResult> {
  let text = "";
  const citations: Citation[] = [];
  const statuses: ChatStatus[] = [];
  const order: string[] = [];
  let final: ChatFinal | undefined;
  let turnId = "";
  for await (const { event } of client.chat(request)) {
    const e = event?.event;
    if (!e?.case) continue;
    order.push(e.case);
    if (e.case === "text") text += e.value.text;
    else if (e.case === "citation") citations.push(e.value);
    else if (e.case === "status") statuses.push(e.value);
    else if (e.case === "final") final = e.value;
    else if (e.case === "started") turnId = e.value.turnId;
  }
  expect(final, "the chat stream ended without a final event").toBeDefined();
  expect(order.at(-1)).toBe("final");
  return { text, citations, final: final!, statuses, order, turnId };
}

/** The snippet without the ellipsis that marks a cut. */
export function snippetBody(snippet: string): string {
  return snippet.replace(/…$/, "").trim();
}

/**
 * Ties a citation to the file it names. For plain-text formats (Markdown, text) the snippet is a
 * stretch of the file itself. CSV, HTML and PDF are rewritten by their parsers (labelled rows, tags
 * dropped, entities decoded, layout flattened), so there every word of the snippet must occur in
 * the source: the file, or for a PDF the text of the pages the citation names.
 */
export function expectCitationFromFile(citation: Citation, source: string): void {
  const body = snippetBody(citation.snippet);
  expect(body.length, `citation [${citation.marker}] has an empty snippet`).toBeGreaterThan(0);
  if (/\.(md|txt)$/i.test(citation.fileName)) {
    expect(flat(source), `citation [${citation.marker}] snippet is not text of ${citation.fileName}`).toContain(body);
    return;
  }
  // The CSV parser opens with a "Columns:" line of its own making.
  const words = (body.match(/[\p{L}\p{N}]{3,}/gu) ?? []).filter((w) => !(/\.csv$/i.test(citation.fileName) && w === "Columns"));
  expect(words.length).toBeGreaterThan(0);
  const missing = words.filter((w) => !source.includes(w));
  expect(missing, `citation [${citation.marker}] snippet words not in ${citation.fileName}`).toEqual([]);
}

/** The text of each page of a PDF (index 0 is page 1), read with unpdf directly rather than through Quarry. */
export async function pdfPageTexts(bytes: Uint8Array): Promise<string[]> {
  const { extractText, getDocumentProxy } = await import("unpdf");
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  const { text } = await extractText(pdf, { mergePages: false });
  return text;
}

/** `quarry ARGS…` as a person runs it (bin/quarry.mjs in a child process, no API key), with its exit code and output; `env` over the test's own. */
export function runQuarryCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve(process.cwd(), "bin/quarry.mjs"), ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, QUARRY_API_KEY: "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}
