// How much a question's repeated terms should count in BM25 (query-terms.ts), measured on a kept
// embedded base through its real keyword table and the engine's own statement (bm25Sql): each
// question searched three ways, interleaved, so one run compares them on the same machine state —
// every term once (Quarry before), every repetition in full (what a Lucene match query does), and
// the rule (repetition saturated and length-normalised as a chunk's term frequency is). It reports
// nDCG@10, Recall@100 and the statement's latency for each, and the latency ratios to "once".
//
//   node --import tsx eval/question-term-study.ts --dataset DIR --data-dir D --knowledge-base NAME [--limit 200]
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { DEFAULT_MAX_QUESTION_CHARS } from "../services/answer/index.ts";
import { averageRowLength, weightedQueryTerms, type WeightedTerms, queryTermCounts, bm25Parameters, bm25Sql } from "../services/index/lab.ts";
import { keywordIndexSize } from "../services/index/index.ts";
import { documentRanking, percentile, summarize } from "./metrics.ts";
import { loadStudyDataset } from "./study-dataset.ts";

const { values } = parseArgs({
  options: { dataset: { type: "string" }, "data-dir": { type: "string" }, "knowledge-base": { type: "string" }, limit: { type: "string", default: "200" } },
});
const dataset = await loadStudyDataset("question-term-study", values.dataset);
const limit = Number(values.limit);
const db = new Database(join(values["data-dir"]!, "quarry.db"), { readonly: true });
const kb = db.prepare(`SELECT id FROM knowledge_bases WHERE name = ?`).get(values["knowledge-base"]) as { id: string } | undefined;
if (!kb) throw new Error(`no knowledge base named ${values["knowledge-base"]} in ${values["data-dir"]}`);
const { keyword_table: table } = db.prepare(`SELECT keyword_table FROM search_spaces WHERE knowledge_base_id = ?`).get(kb.id) as { keyword_table: string };
const averageLength = averageRowLength([keywordIndexSize(db, table)]);

const rules: [string, (text: string) => WeightedTerms[]][] = [
  ["every term once", (text) => [{ weight: 1, terms: [...queryTermCounts(text).keys()] }]],
  ["every repetition in full", (text) => byCount(text, (count) => count)],
  ["saturated like a chunk's (the rule)", (text) => weightedQueryTerms(text, averageLength)],
];

function byCount(text: string, weight: (count: number) => number): WeightedTerms[] {
  const groups = new Map<number, string[]>();
  for (const [term, count] of queryTermCounts(text)) groups.set(count, [...(groups.get(count) ?? []), term]);
  return [...groups].map(([count, terms]) => ({ weight: weight(count), terms }));
}

const statements = new Map<number, Database.Statement>();
function search(groups: WeightedTerms[]): { file_name: string }[] {
  let statement = statements.get(groups.length);
  if (!statement) statements.set(groups.length, (statement = db.prepare(bm25Sql(table, groups.length))));
  return statement.all({ ...bm25Parameters(groups), documents: null, limit }) as { file_name: string }[];
}

const runs = rules.map(() => new Map<string, string[]>());
const latencies = rules.map(() => [] as number[]);
for (const q of dataset.queries) {
  if (q.text.trim().length > DEFAULT_MAX_QUESTION_CHARS) continue; // refused by the pipeline: scores 0
  rules.forEach(([, groupsOf], i) => {
    const groups = groupsOf(q.text).filter((group) => group.terms.length > 0);
    const started = performance.now();
    const rows = groups.length > 0 ? search(groups) : [];
    latencies[i].push(performance.now() - started);
    runs[i].set(q.id, documentRanking(q.id, rows.map((row) => row.file_name.replace(/\.(md|txt)$/, ""))));
  });
}
console.log(`${dataset.dir}: ${dataset.queries.length} questions, average chunk ${averageLength.toFixed(1)} terms\n`);
console.log("| BM25 counts a repeated question term | nDCG@10 | Recall@100 | p50 ms | p95 ms | p50 ÷ once |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
const onceP50 = percentile(latencies[0], 50);
rules.forEach(([name], i) => {
  const m = summarize(dataset.qrels, runs[i]);
  const p50 = percentile(latencies[i], 50);
  console.log(`| ${name} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} | ${p50.toFixed(1)} | ${percentile(latencies[i], 95).toFixed(1)} | ${(p50 / onceP50).toFixed(2)} |`);
});
