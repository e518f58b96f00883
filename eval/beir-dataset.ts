// Reads a dataset laid out as BEIR lays it out: corpus.jsonl ({_id, title, text} a line),
// queries.jsonl ({_id, text} a line) and qrels/<split>.tsv (query-id, corpus-id, score, with a
// header line). The corpus is streamed line by line, since real corpora run to gigabytes; queries
// and qrels are small and held in memory.
import { createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { InvalidInputError, NotFoundError } from "../lib/errors.ts";

export interface BeirDocument {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
}

/** query id → (corpus id → graded relevance). Only judgements above 0 are kept. */
export type Qrels = Map<string, Map<string, number>>;

export interface BeirDataset {
  dir: string;
  /** Only queries that have at least one relevant judgement, in queries.jsonl order. */
  queries: BeirQuery[];
  qrels: Qrels;
  /** The corpus documents to ingest (all of them, or the --limit-docs selection). */
  corpus: BeirDocument[];
  /** How many documents corpus.jsonl holds in all. */
  corpusSize: number;
}

export interface LoadOptions {
  split?: string;
  /** Evaluate only the first N judged queries. */
  limitQueries?: number;
  /**
   * Ingest at most N documents: every document judged relevant for an evaluated query first, then
   * the first others in file order as distractors. A plain head of the file would drop most
   * relevant documents and make every metric meaningless.
   */
  limitDocs?: number;
}

async function* jsonLines(path: string): AsyncGenerator<{ value: Record<string, unknown>; line: number }> {
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  let line = 0;
  for await (const raw of lines) {
    line++;
    if (!raw.trim()) continue;
    try {
      yield { value: JSON.parse(raw) as Record<string, unknown>, line };
    } catch (error) {
      throw new InvalidInputError(`${path}:${line} is not valid JSON`, { cause: error });
    }
  }
}

function idOf(value: Record<string, unknown>, path: string, line: number): string {
  const id = value._id;
  if (typeof id === "string" && id) return id;
  if (typeof id === "number") return String(id);
  throw new InvalidInputError(`${path}:${line} has no _id`);
}

/** Streams corpus.jsonl, one document at a time. */
export async function* readCorpus(dir: string): AsyncGenerator<BeirDocument> {
  const path = join(dir, "corpus.jsonl");
  for await (const { value, line } of jsonLines(path)) {
    yield { id: idOf(value, path, line), title: typeof value.title === "string" ? value.title : "", text: typeof value.text === "string" ? value.text : "" };
  }
}

export async function readQueries(dir: string): Promise<BeirQuery[]> {
  const path = join(dir, "queries.jsonl");
  const queries: BeirQuery[] = [];
  for await (const { value, line } of jsonLines(path)) {
    queries.push({ id: idOf(value, path, line), text: typeof value.text === "string" ? value.text : "" });
  }
  return queries;
}

export async function readQrels(dir: string, split = "test"): Promise<Qrels> {
  const path = join(dir, "qrels", `${split}.tsv`);
  const qrels: Qrels = new Map();
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  let line = 0;
  for await (const raw of lines) {
    line++;
    if (!raw.trim()) continue;
    const [queryId, corpusId, score] = raw.split("\t").map((s) => s.trim());
    if (line === 1 && queryId === "query-id") continue;
    const relevance = Number(score);
    if (!queryId || !corpusId || !Number.isFinite(relevance)) throw new InvalidInputError(`${path}:${line} is not "query-id<TAB>corpus-id<TAB>score"`);
    // As pytrec_eval: a judgement of 0 (or less) means "judged, not relevant" and counts for nothing.
    if (relevance <= 0) continue;
    let judged = qrels.get(queryId);
    if (!judged) qrels.set(queryId, (judged = new Map()));
    judged.set(corpusId, relevance);
  }
  return qrels;
}

export async function loadBeirDataset(dir: string, options: LoadOptions = {}): Promise<BeirDataset> {
  for (const file of ["corpus.jsonl", "queries.jsonl", join("qrels", `${options.split ?? "test"}.tsv`)]) {
    try {
      await access(join(dir, file));
    } catch {
      throw new NotFoundError(`${dir} is not a BEIR dataset: ${file} is missing`);
    }
  }
  const allQrels = await readQrels(dir, options.split);
  let queries = (await readQueries(dir)).filter((q) => allQrels.has(q.id));
  if (options.limitQueries !== undefined) queries = queries.slice(0, options.limitQueries);
  if (queries.length === 0) throw new InvalidInputError(`${dir}: no query in queries.jsonl has a relevance judgement`);
  const qrels: Qrels = new Map(queries.map((q) => [q.id, allQrels.get(q.id)!]));

  const relevant = new Set([...qrels.values()].flatMap((judged) => [...judged.keys()]));
  const limit = options.limitDocs ?? Infinity;
  let relevantBudget = limit;
  let distractorBudget = Math.max(0, limit - relevant.size);
  const corpus: BeirDocument[] = [];
  let corpusSize = 0;
  for await (const doc of readCorpus(dir)) {
    corpusSize++;
    if (relevant.has(doc.id) ? relevantBudget-- > 0 : distractorBudget-- > 0) corpus.push(doc);
  }
  return { dir, queries, qrels, corpus, corpusSize };
}

/**
 * Reads answers.jsonl ({_id, answers: [...]} a line): the gold answer texts of each query, for
 * `quarry eval-answers`. Empty answers are dropped; a query with none left is absent.
 */
export async function readAnswers(dir: string): Promise<Map<string, string[]>> {
  const path = join(dir, "answers.jsonl");
  try {
    await access(path);
  } catch {
    throw new NotFoundError(`${dir} has no answers.jsonl, so answers cannot be scored (one {"_id", "answers": [...]} object a line)`);
  }
  const answers = new Map<string, string[]>();
  for await (const { value, line } of jsonLines(path)) {
    const list = value.answers;
    if (!Array.isArray(list) || list.some((a) => typeof a !== "string")) throw new InvalidInputError(`${path}:${line} has no "answers" list of strings`);
    const golds = (list as string[]).filter((a) => a.trim());
    if (golds.length > 0) answers.set(idOf(value, path, line), golds);
  }
  return answers;
}
