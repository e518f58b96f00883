// The keyword half of issue #14's study, offline and cheap: Quarry's own FTS5 setup (the table,
// tokenizer and query expression of services/index/sqlite) on an in-memory database, fed with
// different units of a BEIR corpus — whole documents or Quarry's chunks, with or without the
// heading path — so each cause is measured alone without a full ingest.
//
//   node --import tsx eval/keyword-study.ts --dataset ../shared/eval/arguana-public [--cache DIR]
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import type { ChunkingSettings } from "../lib/domain.ts";
import { withHeadingPath } from "../lib/chunk-context.ts";
import { WordPieceTokenCounter } from "../lib/tokens/wordpiece-token-counter.ts";
import { chunkDocument, defaultChunkingSettings } from "../services/chunker/index.ts";
import { defaultModelDir } from "../services/embedder/index.ts";
import { segmentForIndex } from "../services/index/lab.ts";
import { parseMarkdown } from "../services/parser/index.ts";
import type { BeirDocument } from "./beir-dataset.ts";
import { loadStudyDataset } from "./study-dataset.ts";
import { documentRanking, summarize } from "./metrics.ts";
import { documentText } from "./run-eval.ts";
import { StudyKeywordTable } from "./study-keyword-table.ts";

const { values } = parseArgs({ options: { dataset: { type: "string" }, cache: { type: "string", default: "/tmp/long-document-study" } } });
const dataset = await loadStudyDataset("keyword-study.ts", values.dataset);
const counter = WordPieceTokenCounter.fromModelDir(defaultModelDir());
const maxInputTokens = 256;

type Units = (doc: BeirDocument) => string[];
const chunks =
  (settings: ChunkingSettings, headingPath: boolean): Units =>
  (doc) => {
    const parsed = { ...parseMarkdown(documentText(doc)), mimeType: "text/markdown", parser: "builtin:markdown" };
    return chunkDocument(parsed, settings, counter, { maxInputTokens }).map((c) => (headingPath ? withHeadingPath(c.text, c.sectionPath) : c.text));
  };
const defaults = defaultChunkingSettings(maxInputTokens);
const variants: [string, Units][] = [
  ["whole document, title + text", (doc) => [`${doc.title}\n${doc.text}`]],
  ["whole document, text only", (doc) => [doc.text]],
  [`quarry chunks ${defaults.chunkSize}/${defaults.chunkOverlap} + heading path (today)`, chunks(defaults, true)],
  [`quarry chunks ${defaults.chunkSize}/${defaults.chunkOverlap}, no heading path`, chunks(defaults, false)],
  ["quarry chunks 254/38 + heading path", chunks({ ...defaults, chunkSize: 254, chunkOverlap: 38 }, true)],
];

const lines: string[] = ["| keyword units | units | nDCG@10 | Recall@100 | MRR@10 |", "| --- | ---: | ---: | ---: | ---: |"];
process.stdout.write(lines.join("\n") + "\n");
const lists: Record<string, [string, string[]][]> = {};
for (const [name, units] of variants) {
  const db = new Database(":memory:");
  const keywords = new StudyKeywordTable(db);
  const owner: string[] = [];
  keywords.addAll(dataset.corpus.flatMap((doc) => units(doc).map((text) => ({ rowid: owner.push(doc.id), terms: segmentForIndex(text) }))));
  const runs = new Map<string, string[]>();
  for (const q of dataset.queries) {
    const rows = keywords.search(q.text, 1000);
    runs.set(q.id, documentRanking(q.id, rows.map((r) => owner[r.rowid - 1])));
  }
  lists[name] = [...runs];
  const m = summarize(dataset.qrels, runs);
  const line = `| ${name} | ${owner.length} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} | ${m.mrrAt10.toFixed(4)} |`;
  lines.push(line);
  process.stdout.write(line + "\n");
  db.close();
}
await mkdir(values.cache!, { recursive: true });
await writeFile(join(values.cache!, "keyword-lists.json"), JSON.stringify(lists));
