// Whether the keyword query may leave out stop words (services/index/search/stop-words.ts), measured
// offline: Quarry's chunks of a BEIR corpus (heading path included, as ingested) in the engine's FTS5
// keyword table, searched with the engine's weighted statement, once with every word of the question
// and once per stop list. Keyword: the whole corpus. Hybrid (--hybrid-docs N): the relevant
// documents of the questions plus hash-chosen distractors up to N, each chunk embedded with the
// default model, the top 100 of each list fused by RRF (k = 60) as the engine fuses chunk lists; the
// vector list is the same in every row, so a difference is the keyword query's alone.
//
//   node --import tsx eval/stop-word-study.ts --dataset ../shared/eval/scifact --hybrid-docs 1000
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { withHeadingPath } from "../lib/chunk-context.ts";
import { WordPieceTokenCounter } from "../lib/tokens/wordpiece-token-counter.ts";
import { chunkDocument, defaultChunkingSettings } from "../services/chunker/index.ts";
import { defaultModelDir, OnnxEmbedder } from "../services/embedder/index.ts";
import { fuseReciprocalRank, ENGLISH_STOP_WORDS, segmentForIndex } from "../services/index/lab.ts";
import { parseMarkdown } from "../services/parser/index.ts";
import type { BeirDocument } from "./beir-dataset.ts";
import { documentRanking, summarize } from "./metrics.ts";
import { documentText } from "./run-eval.ts";
import { sampleByHash } from "./score-distribution.ts";
import { loadStudyDataset } from "./study-dataset.ts";
import { StudyKeywordTable } from "./study-keyword-table.ts";

const { values } = parseArgs({ options: { dataset: { type: "string" }, "hybrid-docs": { type: "string" }, threads: { type: "string", default: "1" } } });
const dataset = await loadStudyDataset("stop-word-study.ts", values.dataset);
const counter = WordPieceTokenCounter.fromModelDir(defaultModelDir());
const settings = defaultChunkingSettings(256);

// The console's highlighter list: Lucene's plus question words ("do", "what", "how"), for comparison.
const WIDER = new Set([
  ...ENGLISH_STOP_WORDS,
  ..."about can could did do does from has have how i its me my our should so than them those use was we were what when where which who why would you your".split(" "),
]);
const LISTS: [string, ReadonlySet<string>][] = [
  ["every word (before)", new Set()],
  ["Lucene's English stop words (the rule)", ENGLISH_STOP_WORDS],
  ["Lucene's + question words", WIDER],
];

interface Unit {
  doc: string;
  text: string;
}
function unitsOf(docs: readonly BeirDocument[]): Unit[] {
  return docs.flatMap((doc) => {
    const parsed = { ...parseMarkdown(documentText(doc)), mimeType: "text/markdown", parser: "builtin:markdown" };
    return chunkDocument(parsed, settings, counter, { maxInputTokens: 256 }).map((c) => ({ doc: doc.id, text: withHeadingPath(c.text, c.sectionPath) }));
  });
}

function keywordTable(units: readonly Unit[]): StudyKeywordTable {
  const table = new StudyKeywordTable(new Database(":memory:"));
  table.addAll(units.map((unit, i) => ({ rowid: i + 1, terms: segmentForIndex(unit.text) })));
  return table;
}

const rows: string[] = ["| set | mode | question words | nDCG@10 | Recall@100 |", "| --- | --- | --- | ---: | ---: |"];
const name = values.dataset!.split("/").filter(Boolean).pop();
const report = (mode: string, list: string, runs: Map<string, string[]>) => {
  const m = summarize(dataset.qrels, runs);
  rows.push(`| ${name} | ${mode} | ${list} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} |`);
  process.stdout.write(rows.at(-1) + "\n");
};

{
  const units = unitsOf(dataset.corpus);
  const table = keywordTable(units);
  for (const [list, stopWords] of LISTS) {
    const runs = new Map(dataset.queries.map((q) => [q.id, documentRanking(q.id, table.search(q.text, 1000, stopWords).map((r) => units[r.rowid - 1].doc))]));
    report(`keyword, ${dataset.corpus.length} docs`, list, runs);
  }
}

if (values["hybrid-docs"]) {
  const relevant = new Set(dataset.queries.flatMap((q) => [...dataset.qrels.get(q.id)!.keys()]));
  const distractors = sampleByHash(
    dataset.corpus.filter((d) => !relevant.has(d.id)),
    (d) => d.id,
    Math.max(0, Number(values["hybrid-docs"]) - relevant.size),
  );
  const docs = [...dataset.corpus.filter((d) => relevant.has(d.id)), ...distractors];
  const units = unitsOf(docs);
  const table = keywordTable(units);
  const embedder = await OnnxEmbedder.load(defaultModelDir(), { threads: Number(values.threads) });
  process.stderr.write(`embedding ${units.length} chunks of ${docs.length} documents and ${dataset.queries.length} questions\n`);
  const chunkVectors = await embedder.embed(
    units.map((u) => u.text),
    "document",
  );
  const questionVectors = await embedder.embed(
    dataset.queries.map((q) => q.text),
    "query",
  );
  await embedder.close();
  const vectorList = (qv: Float32Array) =>
    chunkVectors
      .map((cv, i) => ({ id: String(i + 1), score: cv.reduce((sum, x, j) => sum + x * qv[j], 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 100);
  const vectorLists = questionVectors.map(vectorList);
  for (const [list, stopWords] of LISTS) {
    const runs = new Map(
      dataset.queries.map((q, i) => {
        const bm25 = table.search(q.text, 100, stopWords).map((r) => ({ id: String(r.rowid), score: r.score }));
        const fused = fuseReciprocalRank([
          { name: "bm25", hits: bm25 },
          { name: "vector", hits: vectorLists[i] },
        ]);
        return [q.id, documentRanking(q.id, fused.map((e) => units[Number(e.id) - 1].doc))];
      }),
    );
    report(`hybrid, ${docs.length} docs`, list, runs);
  }
}
process.stdout.write("\n" + rows.join("\n") + "\n");
