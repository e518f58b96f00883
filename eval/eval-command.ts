// `quarry eval`: measures retrieval quality on a BEIR-format dataset through Quarry's public API.
// Without --url it starts its own embedded Quarry per backend on a throwaway data dir, so a run
// never touches the user's data and always starts from an empty index.
import { basename, resolve } from "node:path";
import { appendFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { Command, Option } from "commander";
import { gatewayClient } from "../client/gateway-client.ts";
import { chunkingFromFlags, DOCUMENT_VECTOR_CHOICES } from "../client/chunking-options.ts";
import { ConfigError, type Env } from "../lib/config.ts";
import { createLogger, type Logger } from "../lib/logger.ts";
import { loadBeirDataset, type BeirDataset } from "./beir-dataset.ts";
import { formatTable, jsonLine, machineInfo, type RunContext } from "./report.ts";
import {
  corpusModel,
  EVAL_MODES,
  ingestCorpus,
  runQueries,
  scoreRun,
  startEvalTarget,
  type EvalBackend,
  type EvalMode,
  type EvalResult,
} from "./run-eval.ts";
import { ingestedBase } from "./reuse-base.ts";
import { addRetrievalFlags, retrievalSettingsOf, type RetrievalFlags } from "../client/retrieval-flags.ts";

export interface EvalOptions extends RetrievalFlags {
  dataset: string;
  mode?: EvalMode;
  backend?: EvalBackend;
  compare?: boolean;
  json?: boolean;
  limitQueries?: number;
  limitDocs?: number;
  url?: string;
  concurrency?: number;
  /** The embedding model of the knowledge base the run creates; absent: chosen from the corpus's text, as `quarry ingest` chooses. */
  embeddingModel?: string;
  /** Also score the client-side prototype of gated fusion (see fusion-prototype.ts). */
  prototypeFusion?: boolean;
  /** Whether the base the run creates also embeds each document whole; absent: the server's default. */
  documentVector?: (typeof DOCUMENT_VECTOR_CHOICES)[number];
  /** The embedded instance's data dir, kept after the run so a later run can reuse its base. */
  dataDir?: string;
  /** The knowledge base to evaluate: reused as it is when it already holds documents. */
  knowledgeBase?: string;
  /** A file to write each query's ranked document ids to (JSON lines), to compare two bases' answers. */
  rankings?: string;
}

export interface EvalIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  env: Env;
  logger?: Logger;
}

/** Which backends and modes a run covers: --compare widens both, --mode/--backend pick one. */
export function plan(options: EvalOptions, env: Env): { backends: EvalBackend[]; modes: EvalMode[] } {
  const modes = options.mode && !options.compare ? [options.mode] : [...EVAL_MODES];
  let backends: EvalBackend[];
  if (options.backend) backends = [options.backend];
  else if (options.compare && !options.url && env.OPENSEARCH_URL?.trim()) backends = ["embedded", "opensearch"];
  else backends = ["embedded"];
  return { backends, modes };
}

export function progress(err: NodeJS.WritableStream, label: string): (done: number, total: number) => void {
  let last = 0;
  const started = performance.now();
  return (done, total) => {
    const now = performance.now();
    if (done < total && now - last < 5_000) return;
    last = now;
    const seconds = (now - started) / 1000;
    err.write(`${label}: ${done}/${total} (${seconds.toFixed(0)} s, ${(done / Math.max(seconds, 1e-3)).toFixed(1)}/s)\n`);
  };
}

export async function runEval(options: EvalOptions, io: EvalIo): Promise<EvalResult[]> {
  const { out, err, env } = io;
  const logger = io.logger ?? createLogger("eval", env.QUARRY_LOG_LEVEL ?? "warn");
  const dir = resolve(options.dataset);
  const dataset: BeirDataset = await loadBeirDataset(dir, { limitQueries: options.limitQueries, limitDocs: options.limitDocs });
  const { backends, modes } = plan(options, env);
  const context: RunContext = { dataset: basename(dir), queries: dataset.queries.length, corpusSize: dataset.corpusSize, ingestSeconds: {} };
  // A base this run creates gets the model `quarry ingest` would give it: a Chinese set embedded by
  // the English default would score its vector mode near zero and its hybrid no better than BM25.
  const embeddingModel = options.embeddingModel ?? corpusModel(dataset.corpus);
  const chosen = options.embeddingModel ? "" : " (chosen from the corpus's text, as quarry ingest chooses)";
  err.write(`${context.dataset}: embedding with ${embeddingModel || "the embedder's default model"}${chosen}\n`);
  err.write(`${context.dataset}: ${dataset.queries.length} judged queries, ingesting ${dataset.corpus.length} of ${dataset.corpusSize} documents on ${backends.join(", ")}\n`);

  const results: EvalResult[] = [];
  for (const backend of backends) {
    const target = options.url
      ? { backend, url: options.url, stop: async () => {} }
      : await startEvalTarget(backend, env, logger, { dataDir: options.dataDir && resolve(options.dataDir) });
    const client = gatewayClient(target.url);
    const knowledgeBase = options.knowledgeBase ?? `beir-${context.dataset.replace(/[^A-Za-z0-9_-]/g, "-")}-${randomBytes(3).toString("hex")}`;
    // A named base that was kept is kept again; only a base this run made up is deleted after it.
    const keepBase = options.knowledgeBase !== undefined;
    try {
      const ingestUpload = progress(err, `${backend} upload`);
      const ingestWatch = progress(err, `${backend} ingest`);
      const ingest =
        (keepBase ? await ingestedBase(client, knowledgeBase) : undefined) ??
        (await ingestCorpus(client, knowledgeBase, dataset.corpus, {
          concurrency: options.concurrency,
          embeddingModel,
          chunking: chunkingFromFlags({ documentVector: options.documentVector }),
          onProgress: (done, total, phase) => (phase === "upload" ? ingestUpload : ingestWatch)(done, total),
        }));
      context.ingestSeconds[backend] = ingest.seconds;
      context.embeddingModel = (await client.getKnowledgeBase({ knowledgeBase })).knowledgeBase?.embeddingModel;
      err.write(`${backend}: ${ingest.documents} documents, ${ingest.chunks} chunks${ingest.seconds ? ` in ${ingest.seconds.toFixed(1)} s` : " (reused)"}\n`);
      if (ingest.failed.length > 0) {
        err.write(`${backend}: ${ingest.failed.length} documents failed to ingest, e.g. ${ingest.failed[0].beirId}: ${ingest.failed[0].error}\n`);
      }
      for (const mode of modes) {
        const run = await runQueries(client, knowledgeBase, dataset.queries, mode, ingest.beirIdOf, progress(err, `${backend} ${mode}`));
        if (run.refused?.length) {
          err.write(`${backend} ${mode}: ${run.refused.length} queries refused as invalid (e.g. ${run.refused[0]}), scored 0\n`);
        }
        const result = scoreRun(dataset, run, backend, ingest);
        results.push(result);
        if (options.json) out.write(jsonLine(result, context) + "\n");
        if (options.rankings) await appendFile(options.rankings, [...run.runs].map(([query, ranking]) => JSON.stringify({ backend, mode, query, ranking }) + "\n").join(""));
        // With retrieval options, each mode runs again with them, on the same index, for a comparison.
        const label = optionsLabel(options);
        if (label) {
          const withOptions = await runQueries(client, knowledgeBase, dataset.queries, mode, ingest.beirIdOf, progress(err, `${backend} ${mode} ${label}`), {
            settings: retrievalSettingsOf(options),
            label,
          });
          const scored = scoreRun(dataset, withOptions, backend, ingest);
          results.push(scored);
          if (options.json) out.write(jsonLine(scored, context) + "\n");
        }
      }
      if (options.prototypeFusion) {
        // Loaded here, not at the top: it brings the tokenizers, which every other `quarry` command would pay for at start.
        const { runGatedFusion } = await import("./fusion-prototype.ts");
        const gated = await runGatedFusion(client, knowledgeBase, dataset.queries, ingest.beirIdOf, env, undefined, progress(err, `${backend} gated fusion`));
        err.write(`${backend}: mean share of query word pieces the embedder knows: ${gated.meanCoverage.toFixed(3)}\n`);
        for (const run of gated.runs) {
          const result = scoreRun(dataset, run, backend, ingest);
          results.push(result);
          if (options.json) out.write(jsonLine(result, context) + "\n");
        }
      }
    } finally {
      // Embedded SQLite goes with its temp dir; a server or OpenSearch keeps what is not deleted.
      if (!keepBase && (options.url || backend !== "embedded")) await client.deleteKnowledgeBase({ knowledgeBase }).catch(() => {});
      await target.stop();
    }
  }
  if (!options.json) out.write(formatTable(results, context, machineInfo()));
  return results;
}

/** How a run with retrieval options is labelled, e.g. "+neighbours=1 +rerank"; "" without options. */
export function optionsLabel(flags: RetrievalFlags): string {
  return [
    flags.neighbours ? `+neighbours=${flags.neighbours}` : "",
    flags.bm25Fill ? "+bm25-fill" : "",
    flags.rerank ? "+rerank" : "",
    flags.expand ? `+${flags.expand}${flags.variants ? `=${flags.variants}` : ""}` : "",
    flags.filter ? `+filter` : "",
    flags.fusion ? `+fusion=${flags.fusion}${flags.alpha !== undefined ? `,alpha=${flags.alpha}` : ""}` : "",
  ]
    .filter(Boolean)
    .join(" ");
}

export const positiveInt = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name} must be a positive whole number, not "${value}"`);
  return n;
};

export function registerEvalCommand(program: Command): void {
  const command = program
    .command("eval")
    .description("measure retrieval quality (nDCG@10, Recall@100, MRR@10, latency) on a BEIR-format dataset")
    .requiredOption("--dataset <dir>", "folder with corpus.jsonl, queries.jsonl and qrels/test.tsv")
    .addOption(new Option("--mode <mode>", "one retrieval mode").choices(EVAL_MODES as string[]))
    .addOption(new Option("--backend <backend>", "one index backend (elasticsearch: ELASTICSEARCH_URL)").choices(["embedded", "opensearch", "elasticsearch"]))
    .option("--compare", "every mode, and both backends when OPENSEARCH_URL is set, side by side")
    .option("--json", "one JSON object per backend and mode on stdout")
    .option("--limit-queries <n>", "evaluate the first n judged queries", positiveInt("--limit-queries"))
    .option("--limit-docs <n>", "ingest at most n documents (the relevant ones first)", positiveInt("--limit-docs"))
    .option("--concurrency <n>", "uploads in flight", positiveInt("--concurrency"), 8)
    .option("--embedding-model <name>", "the embedding model of the knowledge base the run creates (default: chosen from the corpus's text, as `quarry ingest` chooses; see `quarry models list`)")
    .addOption(new Option("--document-vector <mode>", "whether the base the run creates also embeds each document whole (default: the server's)").choices(DOCUMENT_VECTOR_CHOICES))
    .option("--prototype-fusion", "also score a client-side prototype of gated hybrid fusion")
    .option("--url <url>", "evaluate a running Quarry instead of starting an embedded one")
    .option("--data-dir <dir>", "the embedded Quarry's data dir, kept after the run (with --knowledge-base: ingest once, evaluate many times)")
    .option("--knowledge-base <name>", "evaluate this knowledge base, reusing it when it already holds documents; it is not deleted")
    .option("--rankings <file>", "append each query's ranked document ids to this file (JSON lines: backend, mode, query, ranking)");
  // With any of these, every mode runs twice on the same index: as it is, then with the options.
  addRetrievalFlags(command).action(async (options: EvalOptions) => {
    await runEval(options, { out: process.stdout, err: process.stderr, env: { ...process.env } });
  });
}
