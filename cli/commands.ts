// The client commands: each reaches the gateway over Connect and prints for a person.
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import cliProgress from "cli-progress";
import { RetrievalMode, DocumentStatus, type SearchHit } from "../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "./gateway-client.ts";
import { chooseModelForFiles } from "./model-choice.ts";

const MIME_BY_EXTENSION: Record<string, string> = {
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".html": "text/html",
  ".htm": "text/html",
  ".csv": "text/csv",
  ".tsv": "text/tab-separated-values",
  ".json": "application/json",
  ".pdf": "application/pdf",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

export function modeOf(name: string | undefined): RetrievalMode {
  switch ((name ?? "hybrid").toLowerCase()) {
    case "bm25":
    case "keyword":
      return RetrievalMode.BM25;
    case "vector":
    case "dense":
      return RetrievalMode.VECTOR;
    case "hybrid":
      return RetrievalMode.HYBRID;
    default:
      throw new Error(`--mode must be hybrid, bm25 or vector, not ${name}`);
  }
}

async function filesUnder(path: string): Promise<string[]> {
  const info = await stat(path);
  if (info.isFile()) return [path];
  const out: string[] = [];
  for (const entry of await readdir(path, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const full = join(path, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out.sort();
}

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

export async function ingest(client: QuarryClient, paths: string[], kb: string, options: { wait: boolean; out: NodeJS.WritableStream }) {
  const { out } = options;
  const files = (await Promise.all(paths.map(filesUnder))).flat();
  await ensureKnowledgeBase(client, kb, out, files);
  const ids: string[] = [];
  const started = performance.now();
  let failedUploads = 0;
  for (const file of files) {
    const content = await readFile(file);
    try {
      const res = await client.uploadDocument({
        header: { knowledgeBase: kb, fileName: basename(file), mimeType: MIME_BY_EXTENSION[extname(file).toLowerCase()] ?? "" },
        content,
      });
      if (res.unchanged) out.write(`unchanged  ${file}\n`);
      else ids.push(res.document!.id);
    } catch (error) {
      failedUploads++;
      out.write(`rejected   ${file}: ${error instanceof ConnectError ? error.rawMessage : String(error)}\n`);
    }
  }
  if (!options.wait || ids.length === 0) return { ready: 0, failed: failedUploads, seconds: (performance.now() - started) / 1000 };

  const bar = new cliProgress.SingleBar(
    { format: "ingesting [{bar}] {percentage}% | {value}/{total} documents | {file}", hideCursor: true, noTTYOutput: false, stream: out as never },
    cliProgress.Presets.shades_classic,
  );
  const percents = new Map(ids.map((id) => [id, 0]));
  const finished = new Map<string, { file: string; status: DocumentStatus; error: string; chunks: number }>();
  bar.start(ids.length * 100, 0, { file: "" });
  for await (const update of client.watchIngestion({ documentIds: ids })) {
    percents.set(update.documentId, update.status === DocumentStatus.FAILED ? 100 : update.percent);
    if (update.status === DocumentStatus.READY || update.status === DocumentStatus.FAILED) {
      finished.set(update.documentId, { file: update.fileName, status: update.status, error: update.error, chunks: update.chunkCount });
    }
    bar.update([...percents.values()].reduce((a, b) => a + b, 0), { file: update.fileName });
  }
  bar.stop();
  let ready = 0;
  let failed = failedUploads;
  for (const doc of finished.values()) {
    if (doc.status === DocumentStatus.READY) {
      ready++;
      out.write(`ready      ${doc.file} (${doc.chunks} chunks)\n`);
    } else {
      failed++;
      out.write(`failed     ${doc.file}: ${doc.error}\n`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  out.write(`${ready} ready, ${failed} failed in ${seconds.toFixed(1)} s\n`);
  return { ready, failed, seconds };
}

export async function ask(client: QuarryClient, question: string, kbs: string[], options: { mode?: string; topK?: number; out: NodeJS.WritableStream }) {
  const { out } = options;
  const citations: { marker: number; fileName: string; page: number; sectionPath: string[]; snippet: string; score: number }[] = [];
  for await (const { event } of client.chat({ question, knowledgeBases: kbs, settings: { mode: modeOf(options.mode), topK: options.topK ?? 0 } })) {
    const e = event?.event;
    if (e?.case === "text") out.write(e.value.text);
    else if (e?.case === "citation") citations.push(e.value);
    else if (e?.case === "final") {
      out.write("\n\n");
      if (e.value.droppedMarkers) out.write(`(${e.value.droppedMarkers} citation marker(s) matched no source and were removed)\n`);
    }
  }
  if (citations.length) out.write("Sources:\n");
  for (const c of citations) {
    const where = [c.fileName, c.page ? `p. ${c.page}` : "", c.sectionPath.join(" > ")].filter(Boolean).join(", ");
    out.write(`  [${c.marker}] ${where} (score ${c.score.toFixed(3)})\n      ${c.snippet.replace(/\s+/g, " ").slice(0, 160)}\n`);
  }
  return citations;
}

export function formatHit(hit: SearchHit, rank: number): string {
  const c = hit.chunk!;
  const e = hit.explain!;
  const where = [hit.fileName, c.page ? `p. ${c.page}` : "", c.sectionPath.join(" > ")].filter(Boolean).join(", ");
  const lists = `bm25 #${e.bm25Rank || "-"} (${e.bm25Score.toFixed(3)}), vector #${e.vectorRank || "-"} (${e.vectorScore.toFixed(3)}), fused ${e.fusedScore.toFixed(4)}`;
  return `${rank}. ${where}  score ${hit.score.toFixed(4)}\n   ${lists}\n   ${c.text.replace(/\s+/g, " ").slice(0, 200)}\n`;
}

export async function search(client: QuarryClient, query: string, kbs: string[], options: { mode?: string; topK?: number; out: NodeJS.WritableStream }) {
  const res = await client.search({ query, knowledgeBases: kbs, settings: { mode: modeOf(options.mode), topK: options.topK ?? 0 } });
  res.hits.forEach((hit, i) => options.out.write(formatHit(hit, i + 1)));
  options.out.write(`${res.hits.length} hits in ${res.tookMs.toFixed(1)} ms\n`);
  return res.hits;
}
