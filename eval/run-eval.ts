// The evaluation run: ingest a BEIR corpus through Quarry's public API (upload → bus → parser →
// chunker → embedder → index, exactly as a user's files go), then ask every judged query through
// the Search RPC in each mode and score the rankings. Talks only to the gateway, so the same code
// measures an embedded instance or a deployed one.
import type { RetrievalSettings } from "../gen/quarry/answer/v1/answer_pb.ts";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { DocumentStatus, RetrievalMode, type ChunkingSettings, type SearchHit } from "../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "../client/gateway-client.ts";
import { chooseModelForText } from "../client/model-choice.ts";
import { ConfigError, type Env } from "../lib/config.ts";
import { FailedPreconditionError } from "../lib/errors.ts";
import type { Logger } from "../lib/logger.ts";
import type { BeirDataset, BeirDocument, BeirQuery } from "./beir-dataset.ts";
import { documentRanking, percentile, summarize, type MetricSummary } from "./metrics.ts";

export type EvalBackend = "embedded" | "opensearch" | "elasticsearch";

/** Each engine backend: the variable that reaches it and the one that names what a run makes there. */
const ENGINE_BACKENDS = {
  opensearch: { url: "OPENSEARCH_URL", prefix: "QUARRY_OPENSEARCH_PREFIX", start: "opensearch" },
  elasticsearch: { url: "ELASTICSEARCH_URL", prefix: "QUARRY_ELASTICSEARCH_PREFIX", start: "elasticsearch" },
} as const;
export type EvalMode = "bm25" | "vector" | "hybrid";
export const EVAL_MODES: readonly EvalMode[] = ["bm25", "vector", "hybrid"];

/**
 * Chunks asked for per query. Recall@100 needs 100 distinct documents; a document split into
 * several chunks uses several of them, so ask for more and deduplicate.
 */
export const HITS_PER_QUERY = 200;

export interface EvalTarget {
  backend: EvalBackend;
  url: string;
  stop(): Promise<void>;
}

/**
 * The environment of an evaluation's Quarry: no Kafka, no Tika, and only the backend under test
 * reachable (Quarry picks OpenSearch, then Elasticsearch, then SQLite), under an index prefix of the
 * run's own, so a run never touches another run's (or a user's) indices.
 */
export function evalTargetEnv(backend: EvalBackend, baseEnv: Env): { env: Env; engine?: (typeof ENGINE_BACKENDS)[keyof typeof ENGINE_BACKENDS] } {
  const env: Env = { ...baseEnv, QUARRY_PORT: "0", QUARRY_HOST: "127.0.0.1" };
  for (const name of ["KAFKA_BROKERS", "TIKA_URL", "OPENSEARCH_URL", "ELASTICSEARCH_URL"]) delete env[name];
  if (backend === "embedded") return { env };
  const engine = ENGINE_BACKENDS[backend];
  const url = baseEnv[engine.url]?.trim();
  if (!url) throw new ConfigError(`--backend ${backend} needs ${engine.url} (start it with deploy/local/engines.sh up ${engine.start})`);
  env[engine.url] = url;
  env[engine.prefix] = `quarry-eval-${randomBytes(4).toString("hex")}`;
  return { env, engine };
}

/**
 * Starts an embedded Quarry on a fresh temporary data dir for one backend. Engines other than the
 * one under test are switched off (in-process bus, built-in parser), so a run measures the index.
 * Given a data dir, it starts on that one and leaves it in place: a second instance (another
 * answerer, say) can then reuse the first one's ingested corpus.
 */
export async function startEvalTarget(backend: EvalBackend, baseEnv: Env, logger: Logger, options: { dataDir?: string } = {}): Promise<EvalTarget> {
  const { env, engine } = evalTargetEnv(backend, baseEnv);
  const ownsDataDir = !options.dataDir;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "quarry-eval-")));
  env.QUARRY_DATA_DIR = dataDir;
  const { startEmbedded } = await import("../app/embedded.ts");
  let running;
  try {
    running = await startEmbedded(env, logger);
  } catch (error) {
    if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
    if (engine) {
      throw new FailedPreconditionError(`could not start Quarry on ${backend} (${env[engine.url]}): ${(error as Error).message}`, { cause: error });
    }
    throw error;
  }
  return {
    backend,
    url: running.url,
    stop: async () => {
      await running.stop();
      if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
      // The run's indices (catalog included) under its own prefix; nothing else matches it.
      if (engine) await dropEngineIndices(backend, env[engine.url]!, env[engine.prefix]!, logger);
    },
  };
}

async function dropEngineIndices(backend: EvalBackend, url: string, prefix: string, logger: Logger): Promise<void> {
  const drop =
    backend === "opensearch"
      ? (await import("../services/index/index.ts")).deleteOpenSearchNamespace
      : (await import("../services/index/index.ts")).deleteElasticsearchNamespace;
  await drop(url, `${prefix}-`).catch((error: unknown) => logger.warn({ err: error, prefix }, `could not delete the evaluation's ${backend} indices and templates`));
}

/**
 * The text a corpus document is uploaded as: Markdown with the title as its heading, the way a
 * user's paper or page arrives. Every chunk then carries the title as its section path, which the
 * embedder and the keyword index put in front of the chunk's text, so the second and third chunks
 * of an abstract still say what paper they belong to. Quarry's Markdown parser keeps the text as
 * it is (only headings make structure), so `*` or `_` in scientific text are not reinterpreted.
 */
export function documentText(doc: BeirDocument): string {
  return doc.title.trim() ? `# ${doc.title.trim().replace(/\s+/g, " ")}\n\n${doc.text}` : doc.text;
}

/** The model `quarry ingest` would give a base of these documents (its sample: the first twenty). */
export function corpusModel(corpus: readonly BeirDocument[]): string {
  return chooseModelForText(corpus.slice(0, 20).map(documentText).join("\n")).model;
}

export interface IngestResult {
  knowledgeBase: string;
  /** Quarry document id → BEIR corpus id. */
  beirIdOf: Map<string, string>;
  documents: number;
  chunks: number;
  failed: { beirId: string; error: string }[];
  seconds: number;
}

export interface IngestOptions {
  concurrency?: number;
  /** The knowledge base's embedding model; empty: the embedder's default. */
  embeddingModel?: string;
  /** The knowledge base's chunking (e.g. two-level); absent: the server's defaults. */
  chunking?: ChunkingSettings;
  onProgress?: (done: number, total: number, phase: "upload" | "ingest") => void;
}

export async function ingestCorpus(client: QuarryClient, knowledgeBase: string, docs: readonly BeirDocument[], options: IngestOptions = {}): Promise<IngestResult> {
  const started = performance.now();
  await client.createKnowledgeBase({ name: knowledgeBase, description: "BEIR evaluation corpus (quarry eval)", embeddingModel: options.embeddingModel ?? "", chunking: options.chunking });
  const beirIdOf = new Map<string, string>();
  const failed: IngestResult["failed"] = [];
  const encoder = new TextEncoder();
  let next = 0;
  let uploaded = 0;
  // Uploads only queue work on the bus; a few in flight keep the pipeline fed without flooding it.
  const uploader = async () => {
    while (next < docs.length) {
      const doc = docs[next++];
      try {
        const res = await client.uploadDocument({
          header: { knowledgeBase, fileName: `${doc.id}.md`, mimeType: "text/markdown", metadata: { beir_id: doc.id } },
          content: encoder.encode(documentText(doc)),
        });
        beirIdOf.set(res.document!.id, doc.id);
      } catch (error) {
        failed.push({ beirId: doc.id, error: error instanceof ConnectError ? error.rawMessage : String(error) });
      }
      options.onProgress?.(++uploaded, docs.length, "upload");
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 8) }, uploader));

  let chunks = 0;
  const finished = new Set<string>();
  // Watching the knowledge base streams until every document in it is ready or failed.
  for await (const update of client.watchIngestion({ knowledgeBase })) {
    if (finished.has(update.documentId)) continue;
    if (update.status === DocumentStatus.READY) {
      finished.add(update.documentId);
      chunks += update.chunkCount;
    } else if (update.status === DocumentStatus.FAILED) {
      finished.add(update.documentId);
      failed.push({ beirId: beirIdOf.get(update.documentId) ?? update.fileName, error: update.error });
    } else continue;
    options.onProgress?.(finished.size, beirIdOf.size, "ingest");
  }
  return { knowledgeBase, beirIdOf, documents: beirIdOf.size, chunks, failed, seconds: (performance.now() - started) / 1000 };
}

export const MODE_TO_PROTO: Record<EvalMode, RetrievalMode> = {
  bm25: RetrievalMode.BM25,
  vector: RetrievalMode.VECTOR,
  hybrid: RetrievalMode.HYBRID,
};

/** The BEIR id of a hit's document: from the upload map, else from the file name `${id}.txt`. */
export function beirIdOfHit(hit: SearchHit, beirIdOf: ReadonlyMap<string, string>): string {
  return beirIdOf.get(hit.chunk?.documentId ?? "") ?? hit.fileName.replace(/\.(md|txt)$/, "");
}

export interface ModeRun {
  /** A retrieval mode, or a prototype's name. */
  mode: string;
  /** query id → BEIR doc ids, best first, deduplicated. */
  runs: Map<string, string[]>;
  /** Client-side milliseconds per query, through the Search RPC. */
  latenciesMs: number[];
  /** Queries Quarry refused as invalid (e.g. empty); they score 0. */
  refused?: string[];
}

export async function runQueries(
  client: QuarryClient,
  knowledgeBase: string,
  queries: readonly BeirQuery[],
  mode: EvalMode,
  beirIdOf: ReadonlyMap<string, string>,
  onProgress?: (done: number, total: number) => void,
  /** Retrieval options on top of the mode (rerank, neighbours, ...), and how the run is labelled. */
  options: { settings?: Partial<Omit<RetrievalSettings, "$typeName">>; label?: string } = {},
): Promise<ModeRun> {
  const settings = { ...options.settings, mode: MODE_TO_PROTO[mode], topK: HITS_PER_QUERY, minScore: 0 };
  // One untimed query first: the first vector query loads the model session and warms caches.
  if (queries.length > 0) await client.search({ query: queries[0].text, knowledgeBases: [knowledgeBase], settings });
  const runs = new Map<string, string[]>();
  const latenciesMs: number[] = [];
  const refused: string[] = [];
  for (const [i, query] of queries.entries()) {
    const started = performance.now();
    try {
      const res = await client.search({ query: query.text, knowledgeBases: [knowledgeBase], settings });
      latenciesMs.push(performance.now() - started);
      runs.set(query.id, documentRanking(query.id, res.hits.map((hit) => beirIdOfHit(hit, beirIdOf))));
    } catch (error) {
      // A query Quarry refuses as invalid (CMRC 2018 has empty ones) scores 0, as a system that
      // returned nothing would; anything else (the service down) still ends the run.
      if (!(error instanceof ConnectError && error.code === Code.InvalidArgument)) throw error;
      refused.push(query.id);
      runs.set(query.id, []);
    }
    onProgress?.(i + 1, queries.length);
  }
  return { mode: options.label ? `${mode} ${options.label}` : mode, runs, latenciesMs, refused };
}

export interface EvalResult extends MetricSummary {
  backend: EvalBackend | string;
  mode: string;
  p50Ms: number;
  p95Ms: number;
  docs: number;
  chunks: number;
  /** Documents that did not reach the index; their qrels still count, so they cost recall. */
  failedDocs: number;
}

export function scoreRun(dataset: BeirDataset, run: ModeRun, backend: string, ingest: Pick<IngestResult, "documents" | "chunks" | "failed">): EvalResult {
  return {
    backend,
    mode: run.mode,
    ...summarize(dataset.qrels, run.runs),
    p50Ms: percentile(run.latenciesMs, 50),
    p95Ms: percentile(run.latenciesMs, 95),
    docs: ingest.documents - ingest.failed.length,
    chunks: ingest.chunks,
    failedDocs: ingest.failed.length,
  };
}
