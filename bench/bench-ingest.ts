// bench ingest: documents and chunks per second through the whole pipeline (gateway upload →
// documents.submitted → parse → chunk → embed → index, from the first upload to the last READY seen
// on WatchIngestion), against the local embedder alone on the very chunk texts the pipeline stored,
// in the same process right after. Embedding is the physical limit on this machine; the ratio says
// what the rest of the pipeline costs on top.
//
// The raw embedder runs twice: once on all chunks in one call (the model's best case: batches of 32
// sorted by length across the whole corpus, so little padding; the goal's yardstick) and once per
// document (what embedding one document at a time would get; the vectorizing stage instead holds
// several documents and joins their chunks into shared forward passes, so it can beat this one).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import type { Embedder } from "../services/embedder/index.ts";
import { startBenchBackend, type BackendName } from "./bench-backend.ts";
import { describeMachine, loadAverageNow, type MachineInfo } from "./machine.ts";
import { startMemorySampler, type MemoryPeak } from "./memory.ts";
import { ratio } from "./percentiles.ts";

export interface IngestBenchOptions {
  backend: BackendName;
  opensearchUrl?: string;
  documents: number;
  /** SciFact abstracts per document (each a section). */
  abstractsPerDocument: number;
  evalDir: string;
  /** The model; with `tokenize` (the local model), the report also counts word pieces. */
  embedder: Embedder & { tokenize?(text: string): number[] };
  progress?(line: string): void;
}

/**
 * Issue #27's estimate for int8 all-MiniLM-L6-v2 on 2 cores, from the model's multiply-adds:
 * 6 layers × (4·384² + 2·384·1536 + 2·256·384) ≈ 11.8 M per token, ≈ 3.0 G per 256-token chunk.
 */
export const ESTIMATED_CHUNKS_PER_SECOND_AT_256 = 45;

/** Texts of full length for the model at its input limit, to measure it against the estimate. */
const FULL_LENGTH_TEXTS = 96;

export interface Throughput {
  seconds: number;
  documentsPerSecond: number;
  chunksPerSecond: number;
}

export interface IngestBenchReport {
  bench: "ingest";
  backend: BackendName;
  machine: MachineInfo;
  loadAverageEnd: [number, number, number];
  settings: { documents: number; abstractsPerDocument: number; evalDir: string };
  corpus: { documents: number; bytes: number; chunks: number; failed: number };
  pipeline: Throughput;
  rawEmbedderAllChunks: Throughput;
  rawEmbedderPerDocument: Throughput;
  /** pipeline chunks/s ÷ raw chunks/s (one call): the goal is ≥ 0.9. */
  pipelineOverRaw: number;
  /** pipeline chunks/s ÷ raw chunks/s embedding one document per call (no cross-document batching). */
  pipelineOverRawPerDocument: number;
  /**
   * The raw model on texts cut at its input limit (every pass full and unpadded), against the
   * estimate; tokensPerSecond of the pipeline and the one-call raw count the word pieces of the
   * stored chunks, so they compare with the estimate's 45 × 256 word pieces a second.
   */
  modelLimit?: {
    tokensPerText: number;
    texts: number;
    seconds: number;
    chunksPerSecond: number;
    estimateChunksPerSecond: number;
    /** chunksPerSecond ÷ the estimate. */
    overEstimate: number;
    chunkTokens: number;
    pipelineTokensPerSecond: number;
    rawAllTokensPerSecond: number;
    /** tokens/s ÷ (estimate × 256): how far each is from the estimate's rate of word pieces. */
    pipelineOverEstimate: number;
    rawAllOverEstimate: number;
  };
  /** budgetMiB: what an embedded server may hold ingesting ordinary documents (docs/benchmarks/memory.md). */
  memory: { pipeline: MemoryPeak; afterRaw: MemoryPeak; budgetMiB: number };
}

export const EMBEDDED_MEMORY_BUDGET_MIB = 1024;

interface BenchDocument {
  fileName: string;
  content: Uint8Array;
}

/** Markdown documents of consecutive SciFact abstracts, each abstract a section under its title. */
export function scifactDocuments(evalDir: string, documents: number, abstractsPerDocument: number): BenchDocument[] {
  const abstracts = readFileSync(join(evalDir, "scifact", "corpus.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
  const needed = documents * abstractsPerDocument;
  if (needed > abstracts.length) throw new RangeError(`${documents} documents of ${abstractsPerDocument} abstracts need ${needed}; SciFact has ${abstracts.length}`);
  return Array.from({ length: documents }, (_, d) => {
    const parts = abstracts.slice(d * abstractsPerDocument, (d + 1) * abstractsPerDocument);
    const markdown = parts.map((a) => `## ${a.title}\n\n${a.text}\n`).join("\n");
    return { fileName: `scifact-${String(d).padStart(5, "0")}.md`, content: new TextEncoder().encode(`# SciFact set ${d}\n\n${markdown}`) };
  });
}

export async function runIngestBench(options: IngestBenchOptions): Promise<IngestBenchReport> {
  const machine = describeMachine();
  const log = options.progress ?? (() => {});
  const docs = scifactDocuments(options.evalDir, options.documents, options.abstractsPerDocument);
  const backend = await startBenchBackend({ backend: options.backend, opensearchUrl: options.opensearchUrl });
  try {
    const { knowledgeBase } = await backend.client.createKnowledgeBase({ name: "bench-ingest" });
    const kb = knowledgeBase!;
    // Warm the model once (first-run graph allocation is not throughput).
    await options.embedder.embed(["warm up"], "document");

    log(`[ingest ${backend.name}] uploading ${docs.length} documents`);
    const memory = startMemorySampler();
    const started = performance.now();
    const ids: string[] = [];
    for (const doc of docs) {
      const res = await backend.client.uploadDocument({ header: { knowledgeBase: kb.id, fileName: doc.fileName, mimeType: "text/markdown" }, content: doc.content });
      ids.push(res.document!.id);
    }
    const finished = new Map<string, { status: DocumentStatus; chunks: number }>();
    let lastReady = started;
    for await (const update of backend.client.watchIngestion({ documentIds: ids })) {
      if (update.status === DocumentStatus.READY || update.status === DocumentStatus.FAILED) {
        if (!finished.has(update.documentId)) {
          finished.set(update.documentId, { status: update.status, chunks: update.chunkCount });
          lastReady = performance.now();
          if (finished.size % 25 === 0) log(`[ingest ${backend.name}] ${finished.size}/${ids.length} done`);
        }
      }
      if (finished.size === ids.length) break;
    }
    const pipelineSeconds = (lastReady - started) / 1000;
    const pipelineMemory = memory.stop();
    const failed = [...finished.values()].filter((f) => f.status === DocumentStatus.FAILED).length;

    const groups = await backend.chunkTexts(kb.id);
    const texts = groups.flat();
    log(`[ingest ${backend.name}] pipeline: ${texts.length} chunks in ${pipelineSeconds.toFixed(1)} s; now the raw embedder on the same texts`);
    const rawAllStarted = performance.now();
    await options.embedder.embed(texts, "document");
    const rawAllSeconds = (performance.now() - rawAllStarted) / 1000;
    const rawDocStarted = performance.now();
    for (const group of groups) await options.embedder.embed(group, "document");
    const rawDocSeconds = (performance.now() - rawDocStarted) / 1000;
    const afterRaw = startMemorySampler().stop();
    const modelLimit = options.embedder.tokenize ? await measureModelLimit(options.embedder as Embedder & { tokenize(text: string): number[] }, texts, pipelineSeconds, rawAllSeconds) : undefined;

    const throughput = (seconds: number): Throughput => ({
      seconds: Math.round(seconds * 100) / 100,
      documentsPerSecond: Math.round((groups.length / seconds) * 100) / 100,
      chunksPerSecond: Math.round((texts.length / seconds) * 100) / 100,
    });
    const pipeline = throughput(pipelineSeconds);
    const rawAll = throughput(rawAllSeconds);
    const rawPerDoc = throughput(rawDocSeconds);
    return {
      bench: "ingest",
      backend: backend.name,
      machine,
      loadAverageEnd: loadAverageNow(),
      settings: { documents: options.documents, abstractsPerDocument: options.abstractsPerDocument, evalDir: options.evalDir },
      corpus: { documents: docs.length, bytes: docs.reduce((n, d) => n + d.content.byteLength, 0), chunks: texts.length, failed },
      pipeline,
      rawEmbedderAllChunks: rawAll,
      rawEmbedderPerDocument: rawPerDoc,
      pipelineOverRaw: ratio(pipeline.chunksPerSecond, rawAll.chunksPerSecond),
      pipelineOverRawPerDocument: ratio(pipeline.chunksPerSecond, rawPerDoc.chunksPerSecond),
      modelLimit,
      memory: { pipeline: pipelineMemory, afterRaw, budgetMiB: EMBEDDED_MEMORY_BUDGET_MIB },
    };
  } finally {
    await backend.close();
  }
}

/** The model on texts it cuts at its input limit (chunks joined until longer), against the estimate. */
async function measureModelLimit(embedder: Embedder & { tokenize(text: string): number[] }, texts: string[], pipelineSeconds: number, rawAllSeconds: number): Promise<IngestBenchReport["modelLimit"]> {
  const limit = embedder.info().maxInputTokens;
  const full: string[] = [];
  for (let i = 0; full.length < FULL_LENGTH_TEXTS && texts.length > 0; ) {
    let text = "";
    while (embedder.tokenize(text).length < limit) text += ` ${texts[i++ % texts.length]}`;
    full.push(text);
  }
  const tokensPerText = Math.min(...full.map((t) => embedder.tokenize(t).length));
  const started = performance.now();
  await embedder.embed(full, "document");
  const seconds = (performance.now() - started) / 1000;
  const chunkTokens = texts.reduce((n, t) => n + embedder.tokenize(t).length, 0);
  const estimateTokens = ESTIMATED_CHUNKS_PER_SECOND_AT_256 * 256;
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    tokensPerText,
    texts: full.length,
    seconds: round(seconds),
    chunksPerSecond: round(full.length / seconds),
    estimateChunksPerSecond: ESTIMATED_CHUNKS_PER_SECOND_AT_256,
    overEstimate: ratio(full.length / seconds, ESTIMATED_CHUNKS_PER_SECOND_AT_256),
    chunkTokens,
    pipelineTokensPerSecond: Math.round(chunkTokens / pipelineSeconds),
    rawAllTokensPerSecond: Math.round(chunkTokens / rawAllSeconds),
    pipelineOverEstimate: ratio(chunkTokens / pipelineSeconds, estimateTokens),
    rawAllOverEstimate: ratio(chunkTokens / rawAllSeconds, estimateTokens),
  };
}
