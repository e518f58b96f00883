// Quarry's own BM25 and vector lists of a kept embedded base, computed from its SQLite file instead
// of through the Search RPC (hundreds of 800-hit searches took an hour on a loaded 2-core machine):
// the same chunk texts under the same FTS5 table definition and query expression, and the stored
// chunk vectors searched exhaustively as sqlite-vec does. Written in the cache format of
// long-document-study.ts, which then scores and fuses them.
//
//   node --import tsx eval/offline-lists.ts --dataset DIR --data-dir D --knowledge-base NAME --cache C
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { DEFAULT_MAX_QUESTION_CHARS } from "../services/answer/index.ts";
import { keywordTerms } from "../services/index/lab.ts";
import { loadBeirDataset } from "./beir-dataset.ts";
import { cachedQueryVectors } from "./query-vectors.ts";
import { StudyKeywordTable } from "./study-keyword-table.ts";

const { values } = parseArgs({
  options: { dataset: { type: "string" }, "data-dir": { type: "string" }, "knowledge-base": { type: "string" }, cache: { type: "string" }, depth: { type: "string", default: "800" } },
});
const depth = Number(values.depth);
const dataset = await loadBeirDataset(values.dataset!);
const queries = dataset.queries;
const db = new Database(join(values["data-dir"]!, "quarry.db"), { readonly: true });
sqliteVec.load(db);
const kb = db.prepare(`SELECT id FROM knowledge_bases WHERE name = ?`).get(values["knowledge-base"]) as { id: string };
const space = db.prepare(`SELECT * FROM search_spaces WHERE knowledge_base_id = ?`).get(kb.id) as { vector_table: string; dimension: number };
type Row = { rowid: number; id: string; file_name: string; text: string; section_path: string };
const rows = db.prepare(`SELECT rowid, id, file_name, text, section_path FROM chunks WHERE knowledge_base_id = ? ORDER BY rowid`).all(kb.id) as Row[];
const vectors = new Map<number, Float32Array>();
for (const v of db.prepare(`SELECT rowid, embedding FROM "${space.vector_table}"`).all() as { rowid: number; embedding: Buffer }[]) {
  vectors.set(v.rowid, new Float32Array(v.embedding.buffer.slice(v.embedding.byteOffset, v.embedding.byteOffset + v.embedding.byteLength)));
}
process.stderr.write(`${rows.length} chunks, ${vectors.size} vectors\n`);

const fts = new Database(":memory:");
const keywords = new StudyKeywordTable(fts);
keywords.addAll(rows.map((r) => ({ rowid: r.rowid, terms: keywordTerms(r.text, JSON.parse(r.section_path) as string[]) })));
const byRowid = new Map(rows.map((r) => [r.rowid, r]));

const queryVectors = await cachedQueryVectors(values.cache!, queries.map((q) => q.text), space.dimension, { threads: 2 });

type Hit = { doc: string; chunk: string; score: number };
const hit = (r: Row, score: number): Hit => ({ doc: r.file_name.replace(/\.(md|txt)$/, ""), chunk: r.id, score });
const bm25 = new Map<string, Hit[]>();
const vector = new Map<string, Hit[]>();
const bm25Answered = new Map<string, Hit[]>();
const vectorAnswered = new Map<string, Hit[]>();
queries.forEach((q, i) => {
  const keyword = keywords.search(q.text, depth).map((x) => hit(byRowid.get(x.rowid)!, x.score));
  const qv = queryVectors[i];
  const dense = rows
    .map((r) => {
      const v = vectors.get(r.rowid)!;
      let dot = 0;
      for (let k = 0; k < qv.length; k++) dot += v[k] * qv[k];
      return hit(r, dot);
    })
    .sort((a, b) => b.score - a.score)
    .slice(0, depth);
  bm25Answered.set(q.id, keyword);
  vectorAnswered.set(q.id, dense);
  // Quarry refuses a question over its character limit (InvalidArgument): it finds nothing.
  const refused = q.text.trim().length > DEFAULT_MAX_QUESTION_CHARS;
  bm25.set(q.id, refused ? [] : keyword);
  vector.set(q.id, refused ? [] : dense);
});
const name = (mode: string, suffix = "") => join(values.cache!, `quarry-${values["knowledge-base"]}-${mode}-${depth}-${queries.length}${suffix}.json`);
await writeFile(name("bm25"), JSON.stringify([...bm25]));
await writeFile(name("vector"), JSON.stringify([...vector]));
await writeFile(name("bm25", "-long-questions-answered"), JSON.stringify([...bm25Answered]));
await writeFile(name("vector", "-long-questions-answered"), JSON.stringify([...vectorAnswered]));
process.stderr.write("lists written\n");
