// `quarry eval-answers`: measures the answers themselves on a BEIR-format folder with answers.jsonl.
// The corpus is ingested once through the real pipeline (as `quarry eval` does), then every query
// goes through Chat once per answerer: the extractive one always, and the configured chat model
// when OPENAI_BASE_URL is set — a second embedded Quarry on the same data dir, so the corpus is not
// ingested twice.
import { appendFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { Option, type Command } from "commander";
import { chunkingFromFlags, PARENT_CHOICES } from "../client/chunking-options.ts";
import { pino } from "pino";
import { Code, ConnectError } from "@connectrpc/connect";
import { DocumentStatus } from "../gen/quarry/common/v1/common_pb.ts";
import { gatewayClient, type QuarryClient } from "../client/gateway-client.ts";
import { ConfigError, type Env } from "../lib/config.ts";
import { FailedPreconditionError, InvalidInputError } from "../lib/errors.ts";
import { createLogger, type Logger } from "../lib/logger.ts";
import { EXTRACTIVE_NOTICES } from "../services/answer/index.ts";
import { answerBody, containsGold, summarizeAnswers, type AnswerMetrics, type AnsweredQuery } from "./answer-metrics.ts";
import { countFailures, failureOfAnswer, FAILURE_KINDS, type FailureKind } from "./answer-failures.ts";
import { loadBeirDataset, readAnswers, type BeirDataset, type BeirDocument, type BeirQuery } from "./beir-dataset.ts";
import { positiveInt, progress } from "./eval-command.ts";
import { machineInfo } from "./report.ts";
import { detailLines, runAnswers, type AnswerRun } from "./run-answers.ts";
import { evidenceDocuments, selectSplit, SPLITS, type Split } from "./unanswerable.ts";
import { corpusModel, documentText, ingestCorpus, startEvalTarget, type EvalTarget } from "./run-eval.ts";

export interface EvalAnswersOptions {
  dataset: string;
  limitQueries?: number;
  json?: boolean;
  concurrency?: number;
  /**
   * Keep Quarry's data here instead of a temporary folder: the first run ingests the corpus into
   * it, later runs with the same folder and dataset answer from what is already there, so changing
   * the answerer does not cost a re-ingest.
   */
  dataDir?: string;
  /** Two-level chunking for the knowledge base the corpus goes into: answers then read parents. */
  parent?: (typeof PARENT_CHOICES)[number];
  /** Also run every question with its evidence disabled, and report how often Quarry abstains. */
  unanswerable?: boolean;
  /** Write one JSON line per question and run here (question, answered, coverage, reason, hit, answer). */
  details?: string;
  /** Which questions: all, the development four-fifths, or the held-out fifth (unanswerable.ts). */
  split?: Split;
  /** The base's embedding model; by default chosen from the corpus's text as `quarry ingest` does. */
  embeddingModel?: string;
}

export interface EvalAnswersIo {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  env: Env;
  logger?: Logger;
}

export interface AnswererResult extends AnswerMetrics {
  answerer: string;
  refused: number;
  /** Where the answerable questions failed: the first step that lost the gold answer (answer-failures.ts). */
  failures: Record<FailureKind, number>;
  /** The unanswerable run: its questions, and the share Quarry said the documents do not answer. */
  unanswerable?: { queries: number; skipped: number; abstainRate: number; p50TotalMs: number };
}

const CHAT_MODEL_VARIABLES = ["OPENAI_BASE_URL", "OPENAI_API_KEY", "QUARRY_CHAT_MODEL", "QUARRY_CHAT_PROVIDER"];

/**
 * The environments to answer with: extractive (no chat model), then the chat model when one is
 * configured — the local one (QUARRY_CHAT_PROVIDER=local) or an OpenAI-compatible endpoint.
 */
export function answererEnvs(env: Env): Env[] {
  const extractive: Env = { ...env };
  for (const name of CHAT_MODEL_VARIABLES) delete extractive[name];
  if (env.QUARRY_CHAT_PROVIDER?.trim() === "local") return [extractive, env];
  if (!env.OPENAI_BASE_URL?.trim()) return [extractive];
  if (!env.QUARRY_CHAT_MODEL?.trim()) throw new ConfigError("OPENAI_BASE_URL is set but QUARRY_CHAT_MODEL is not: name the chat model to evaluate");
  return [extractive, env];
}

export async function runEvalAnswers(options: EvalAnswersOptions, io: EvalAnswersIo): Promise<AnswererResult[]> {
  const { out, err, env } = io;
  // Logs go to stderr: stdout carries the --json lines and nothing else.
  const logger = io.logger ?? createLogger("eval-answers", env.QUARRY_LOG_LEVEL ?? "warn", pino.destination(2));
  const dir = resolve(options.dataset);
  const golds = await readAnswers(dir);
  const dataset = await loadBeirDataset(dir);
  let queries = dataset.queries.filter((q) => golds.has(q.id));
  queries = selectSplit(queries, options.split ?? "all");
  if (options.limitQueries !== undefined) queries = queries.slice(0, options.limitQueries);
  if (queries.length === 0) throw new InvalidInputError(`${dir}: no judged query has an answer in answers.jsonl`);
  const envs = answererEnvs(env);
  const name = basename(dir);
  err.write(`${name}: ${queries.length} queries with gold answers, ingesting ${dataset.corpus.length} documents, ${envs.length} answerer(s)\n`);

  const keep = options.dataDir !== undefined;
  const dataDir = keep ? resolve(options.dataDir!) : await mkdtemp(join(tmpdir(), "quarry-eval-answers-"));
  if (keep) await mkdir(dataDir, { recursive: true });
  // A kept folder names its knowledge base after the dataset alone, so the next run finds it.
  // … and after its parent mode, so one folder can hold the corpus chunked both ways.
  const parentPart = options.parent && options.parent !== "none" ? `-parent-${options.parent}` : "";
  const knowledgeBase = `answers-${name.replace(/[^A-Za-z0-9_-]/g, "-")}${parentPart}${keep ? "" : `-${randomBytes(3).toString("hex")}`}`;
  const chunking = options.parent ? chunkingFromFlags({ parent: options.parent }) : undefined;
  const results: AnswererResult[] = [];
  let docs: Map<string, BeirDocument> | undefined;
  try {
    for (const answererEnv of envs) {
      const target: EvalTarget = await startEvalTarget("embedded", answererEnv, logger, { dataDir });
      try {
        const client = gatewayClient(target.url);
        if (!docs && keep) docs = await ingestedBefore(client, knowledgeBase, dataset.corpus, err);
        if (!docs) {
          const uploaded = progress(err, "upload");
          const ingested = progress(err, "ingest");
          const embeddingModel = options.embeddingModel ?? corpusModel(dataset.corpus);
          if (embeddingModel) err.write(`${name}: embedding with ${embeddingModel}\n`);
          const ingest = await ingestCorpus(client, knowledgeBase, dataset.corpus, {
            concurrency: options.concurrency,
            chunking,
            embeddingModel,
            onProgress: (done, total, phase) => (phase === "upload" ? uploaded : ingested)(done, total),
          });
          err.write(`ingest: ${ingest.documents} documents, ${ingest.chunks} chunks in ${ingest.seconds.toFixed(1)} s\n`);
          if (ingest.failed.length > 0) err.write(`ingest: ${ingest.failed.length} documents failed, e.g. ${ingest.failed[0].beirId}: ${ingest.failed[0].error}\n`);
          const byBeirId = new Map(dataset.corpus.map((d) => [d.id, d]));
          docs = new Map([...ingest.beirIdOf].map(([documentId, beirId]) => [documentId, byBeirId.get(beirId)!]));
        }
        const run = await runAnswers(client, knowledgeBase, queries, docs, progress(err, "answers"));
        if (run.refused.length) err.write(`${run.answerer}: ${run.refused.length} queries refused as invalid (e.g. ${run.refused[0]}), scored as unanswered\n`);
        // Loaded here, not at the top: it brings jieba, which every other `quarry` command would pay for at start.
        const { EXTRACTIVE_NOTICES } = await import("../services/answer/index.ts");
        const metrics = summarizeAnswers(
          queries.map((q) => ({ answered: run.answered.get(q.id)!, golds: golds.get(q.id)! })),
          EXTRACTIVE_NOTICES,
        );
        const failures = countFailures(queries.map((q) => failureOf(run.answered.get(q.id)!, golds.get(q.id)!)));
        const result: AnswererResult = { answerer: run.answerer, refused: run.refused.length, ...metrics, failures };
        const details = [detailLines(run, queries, golds, containsGoldAnswer, "answerable", failureOf)];
        if (options.unanswerable) {
          const unanswerable = await unanswerableRun(client, knowledgeBase, queries, dataset, golds, docs, err);
          result.unanswerable = unanswerable.summary;
          details.push(detailLines(unanswerable.run, queries, golds, containsGoldAnswer, "unanswerable"));
        }
        if (options.details) await appendFile(resolve(options.details), details.filter(Boolean).join("\n") + "\n");
        results.push(result);
        if (options.json) out.write(answerJsonLine(result, name) + "\n");
      } finally {
        await target.stop();
      }
    }
  } finally {
    if (!keep) await rm(dataDir, { recursive: true, force: true });
  }
  if (!options.json) out.write(formatAnswerTable(results, name, queries.length));
  return results;
}

const containsGoldAnswer = (text: string, golds: readonly string[]) => containsGold(answerBody(text, EXTRACTIVE_NOTICES), golds);
const failureOf = (answered: AnsweredQuery, golds: readonly string[]) => failureOfAnswer(answered, golds, EXTRACTIVE_NOTICES);

/**
 * Every question again with its evidence disabled: the answer should be that the knowledge base
 * does not answer it. The documents are enabled again after each question, also when it fails.
 */
async function unanswerableRun(
  client: QuarryClient,
  knowledgeBase: string,
  queries: readonly BeirQuery[],
  dataset: BeirDataset,
  golds: ReadonlyMap<string, string[]>,
  docs: ReadonlyMap<string, BeirDocument>,
  err: NodeJS.WritableStream,
): Promise<{ summary: NonNullable<AnswererResult["unanswerable"]>; run: AnswerRun }> {
  const { evidence, skipped } = evidenceDocuments(queries, dataset.qrels, golds, dataset.corpus);
  if (skipped.length) err.write(`unanswerable: ${skipped.length} questions skipped, their answer is in more than 5 documents\n`);
  const documentIdOf = new Map([...docs].map(([documentId, doc]) => [doc.id, documentId]));
  const setEnabled = (ids: readonly string[], enabled: boolean) =>
    Promise.all(ids.map((id) => documentIdOf.get(id)).filter((id): id is string => !!id).map((documentId) => client.setDocumentEnabled({ documentId, enabled })));
  const asked = queries.filter((q) => evidence.has(q.id));
  const run = await runAnswers(client, knowledgeBase, asked, docs, progress(err, "unanswerable"), async (query, ask) => {
    const ids = evidence.get(query.id)!;
    await setEnabled(ids, false);
    try {
      return await ask();
    } finally {
      await setEnabled(ids, true);
    }
  });
  const metrics = summarizeAnswers(asked.map((q) => ({ answered: run.answered.get(q.id)!, golds: golds.get(q.id)! })), EXTRACTIVE_NOTICES);
  return { summary: { queries: asked.length, skipped: skipped.length, abstainRate: metrics.abstainRate, p50TotalMs: metrics.p50TotalMs }, run };
}


/**
 * The corpus a kept data folder already holds, as Quarry document id → corpus document; undefined
 * when the knowledge base is not there yet. A half-ingested one is an error, not a silent subset.
 */
async function ingestedBefore(client: QuarryClient, knowledgeBase: string, corpus: readonly BeirDocument[], err: NodeJS.WritableStream): Promise<Map<string, BeirDocument> | undefined> {
  try {
    await client.getKnowledgeBase({ knowledgeBase });
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
    throw error;
  }
  const { documents } = await client.listDocuments({ knowledgeBase });
  const byBeirId = new Map(corpus.map((d) => [d.id, d]));
  const ready = documents.filter((d) => d.status === DocumentStatus.READY && byBeirId.has(d.metadata.beir_id));
  if (ready.length < corpus.length) {
    throw new FailedPreconditionError(`${knowledgeBase} in the data folder holds ${ready.length} of the dataset's ${corpus.length} documents ready: delete the folder to ingest again`);
  }
  err.write(`reusing ${knowledgeBase}: ${ready.length} documents already ingested\n`);
  return new Map(ready.map((d) => [d.id, byBeirId.get(d.metadata.beir_id)!]));
}

/** One JSON object per answerer, snake_case like `quarry eval`'s lines; numbers unrounded. */
export function answerJsonLine(r: AnswererResult, dataset: string): string {
  const machine = machineInfo();
  return JSON.stringify({
    dataset,
    answerer: r.answerer,
    queries: r.queries,
    answer_hit_rate: r.answerHitRate,
    answer_f1: r.answerF1,
    median_answer_chars: r.medianAnswerChars,
    citation_hit_rate: r.citationHitRate,
    unsupported_citation_rate: r.unsupportedCitationRate,
    false_abstain_rate: r.abstainRate,
    ...(r.unanswerable
      ? { unanswerable_queries: r.unanswerable.queries, unanswerable_skipped: r.unanswerable.skipped, abstain_rate: r.unanswerable.abstainRate, unanswerable_p50_total_ms: r.unanswerable.p50TotalMs }
      : {}),
    failures: r.failures,
    p50_first_token_ms: r.p50FirstTokenMs,
    p50_total_ms: r.p50TotalMs,
    refused: r.refused,
    cpus: machine.cpus,
    memory_gib: machine.memoryGiB,
  });
}

export function formatAnswerTable(results: readonly AnswererResult[], dataset: string, queries: number): string {
  const machine = machineInfo();
  const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
  const header = ["answerer", "hit rate", "F1", "median chars", "citation hit", "unsupported", "false abstain", "abstain (unanswerable)", "p50 first ms", "p50 total ms"];
  const rows = results.map((r) => [
    r.answerer,
    fixed(r.answerHitRate, 4),
    fixed(r.answerF1, 4),
    fixed(r.medianAnswerChars, 0),
    fixed(r.citationHitRate, 4),
    fixed(r.unsupportedCitationRate, 4),
    fixed(r.abstainRate, 4),
    r.unanswerable ? `${fixed(r.unanswerable.abstainRate, 4)} of ${r.unanswerable.queries}` : "-",
    fixed(r.p50FirstTokenMs, 1),
    fixed(r.p50TotalMs, 1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const render = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [
    `quarry eval-answers — ${dataset}: ${queries} queries with gold answers`,
    `machine: ${machine.cpus} cpus (${machine.cpuModel}), ${machine.memoryGiB} GiB memory, node ${machine.node}`,
    "",
    render(header),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...rows.map(render),
    "",
    "where answerable questions failed (the first step that lost the gold answer):",
    ...results.map((r) => `${r.answerer}: ${FAILURE_KINDS.map((k) => `${k} ${r.failures[k]}`).join(", ")}`),
  ].join("\n") + "\n";
}

export function registerEvalAnswersCommand(program: Command): void {
  program
    .command("eval-answers")
    .description("measure answers (gold-answer hit rate, CMRC F1, length, citation hits, latency) on a BEIR-format dataset with answers.jsonl")
    .requiredOption("--dataset <dir>", "folder with corpus.jsonl, queries.jsonl, qrels/test.tsv and answers.jsonl")
    .option("--limit-queries <n>", "evaluate the first n queries that have gold answers", positiveInt("--limit-queries"))
    .option("--json", "one JSON object per answerer on stdout")
    .option("--concurrency <n>", "uploads in flight", positiveInt("--concurrency"), 8)
    .option("--data-dir <dir>", "keep Quarry's data here; a later run with the same folder reuses the ingested corpus")
    .option("--details <file>", "append one JSON line per question and run: the question, whether it was answered and why, the coverage, whether it held a gold answer, where it failed, and the context it was answered from")
    .option("--unanswerable", "also ask every question with its evidence disabled (its judged documents and every document holding a gold answer; skipped when more than 5) and report abstain_rate")
    .addOption(new Option("--split <which>", "all questions, the development four-fifths or the held-out fifth").choices([...SPLITS]).default("all"))
    .option("--embedding-model <name>", "the embedding model of the knowledge base the run creates (default: chosen from the corpus's text, as `quarry ingest` chooses)")
    .addOption(new Option("--parent <mode>", "chunk the corpus in two levels: answers read each matched chunk's section or whole document").choices(PARENT_CHOICES))
    .action(async (options: EvalAnswersOptions) => {
      await runEvalAnswers(options, { out: process.stdout, err: process.stderr, env: { ...process.env } });
    });
}
