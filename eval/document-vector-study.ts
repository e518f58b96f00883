// How a base's chunk vectors and document vectors should make one vector list (issue #14), measured
// on a kept embedded base without the Search RPC: its chunk texts under the same FTS5 definition and
// query expression (as eval/offline-lists.ts), its stored chunk and document vectors searched
// exhaustively (sqlite-vec's kNN is exact), and the lists fused by the search ladder itself
// (hybridSearch over these lists) or by the alternatives below. Every rule scores vector mode (200
// hits, as `quarry eval`) and hybrid (RRF k = 60 of BM25 and that one vector list, 800 per list),
// plus the three-list fusion the ladder did before, so one run compares them on one base.
//
//   node --import tsx eval/document-vector-study.ts --dataset DIR --data-dir D --knowledge-base NAME --cache C
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import type { Chunk, SearchHit, SearchQuery } from "../lib/domain.ts";
import { withHeadingPath } from "../lib/chunk-context.ts";
import { DEFAULT_MAX_QUESTION_CHARS } from "../services/answer/retrieval/retrieval-stage.ts";
import { ftsMatchExpression } from "../services/index/sqlite/sqlite-search-engine.ts";
import { placeDocumentHits } from "../services/index/search/document-level.ts";
import { hybridSearch, type FetchedLists, type ListRequest } from "../services/index/search/hybrid-search.ts";
import { DEFAULT_RRF_K, fuseHits, type EngineHit } from "../services/index/search/rrf-fusion.ts";
import { segmentForIndex } from "../services/index/search/text-segmenter.ts";
import { loadStudyDataset } from "./study-dataset.ts";
import { documentRanking, summarize } from "./metrics.ts";
import { cachedQueryVectors } from "./query-vectors.ts";

const { values } = parseArgs({
  options: { dataset: { type: "string" }, "data-dir": { type: "string" }, "knowledge-base": { type: "string" }, cache: { type: "string", default: "/tmp/document-vector-study" } },
});
const TOP_K = 200;
const DEPTH = TOP_K * 4;
const k = DEFAULT_RRF_K;
const dataset = await loadStudyDataset("document-vector-study.ts", values.dataset);
const queries = dataset.queries;
await mkdir(values.cache!, { recursive: true });

const db = new Database(join(values["data-dir"]!, "quarry.db"), { readonly: true });
sqliteVec.load(db);
const kb = db.prepare(`SELECT id FROM knowledge_bases WHERE name = ?`).get(values["knowledge-base"]) as { id: string };
const space = db.prepare(`SELECT * FROM search_spaces WHERE knowledge_base_id = ?`).get(kb.id) as { vector_table: string; dimension: number };
type Row = { rowid: number; id: string; document_id: string; chunk_index: number; file_name: string; text: string; section_path: string };
const rows = db
  .prepare(`SELECT rowid, id, document_id, chunk_index, file_name, text, section_path FROM chunks WHERE knowledge_base_id = ? AND enabled = 1 ORDER BY rowid`)
  .all(kb.id) as Row[];
const floats = (b: Buffer) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
const chunkVectors = new Map<number, Float32Array>();
for (const v of db.prepare(`SELECT rowid, embedding FROM "${space.vector_table}"`).all() as { rowid: number; embedding: Buffer }[]) chunkVectors.set(v.rowid, floats(v.embedding));
const documentVectors = new Map<number, Float32Array>();
for (const v of db.prepare(`SELECT rowid, embedding FROM "${space.vector_table}_docs"`).all() as { rowid: number; embedding: Buffer }[]) documentVectors.set(v.rowid, floats(v.embedding));
process.stderr.write(`${rows.length} chunks, ${chunkVectors.size} chunk vectors, ${documentVectors.size} document vectors\n`);

const hitOf = new Map<number, (score: number) => EngineHit>();
for (const r of rows) {
  const chunk = { id: r.id, documentId: r.document_id, knowledgeBaseId: kb.id, index: r.chunk_index } as Chunk;
  const fileName = r.file_name.replace(/\.(md|txt)$/, "");
  hitOf.set(r.rowid, (score) => ({ chunk, fileName, score }));
}
const withVector = new Set([...documentVectors.keys()].map((rowid) => hitOf.get(rowid)!(0).chunk.documentId));

const fts = new Database(":memory:");
fts.exec(`CREATE VIRTUAL TABLE chunks_fts USING fts5(terms, tokenize = 'porter unicode61 remove_diacritics 2')`);
const insert = fts.prepare(`INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)`);
fts.transaction(() => {
  for (const r of rows) insert.run(r.rowid, segmentForIndex(withHeadingPath(r.text, JSON.parse(r.section_path) as string[])));
})();
const search = fts.prepare(`SELECT rowid, -bm25(chunks_fts) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?`);

const queryVectors = await cachedQueryVectors(values.cache!, queries.map((q) => q.text), space.dimension);

function ranked(vectors: Map<number, Float32Array>, q: Float32Array): EngineHit[] {
  const out: EngineHit[] = [];
  for (const [rowid, v] of vectors) {
    let dot = 0;
    for (let i = 0; i < q.length; i++) dot += v[i] * q[i];
    out.push(hitOf.get(rowid)!(dot));
  }
  return out.sort((a, b) => b.score - a.score);
}

/** One rule turning the full chunk and document lists into the one vector list, best first. */
type VectorRule = (chunks: EngineHit[], documents: EngineHit[], depth: number) => EngineHit[];
const byScore = (hits: EngineHit[]) => hits.sort((a, b) => b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : 1));
const rules: [string, VectorRule | "ladder"][] = [
  ["chunk vectors only (document vectors ignored)", (chunks, _d, depth) => chunks.slice(0, depth)],
  ["better cosine of chunk and document (the ladder's rule)", "ladder"],
  [
    "the document's vector where it has one (on its best chunk), its chunks otherwise",
    (chunks, documents, depth) => {
      const placed = placeDocumentHits(documents.slice(0, depth), [{ name: "vector", hits: chunks.slice(0, depth) }], k);
      return byScore([...chunks.filter((hit) => !withVector.has(hit.chunk.documentId)), ...placed]).slice(0, depth);
    },
  ],
  [
    "mean of the document's cosine and the chunk's (every chunk of a document with a vector)",
    (chunks, documents, depth) => {
      const whole = new Map(documents.map((hit) => [hit.chunk.documentId, hit.score]));
      return byScore(chunks.map((hit) => (whole.has(hit.chunk.documentId) ? { ...hit, score: (hit.score + whole.get(hit.chunk.documentId)!) / 2 } : hit))).slice(0, depth);
    },
  ],
  [
    "RRF of the chunk list and the placed document list",
    (chunks, documents, depth) => {
      const chunkList = { name: "vector" as const, hits: chunks.slice(0, depth) };
      const placed = placeDocumentHits(documents.slice(0, depth), [chunkList], k);
      return fuseHits([chunkList, { name: "document", hits: placed }], { k }).map((hit) => ({ chunk: hit.chunk, fileName: hit.fileName, score: hit.score })).slice(0, depth);
    },
  ],
];

const runs = new Map<string, Map<string, string[]>>();
const record = (name: string, qid: string, hits: readonly { fileName: string }[]) => {
  if (!runs.has(name)) runs.set(name, new Map());
  runs.get(name)!.set(qid, documentRanking(qid, hits.slice(0, TOP_K).map((hit) => hit.fileName)));
};
const query = (mode: SearchQuery["mode"], vector: Float32Array): SearchQuery => ({ knowledgeBaseIds: [kb.id], text: "q", mode, topK: TOP_K, minScore: 0, documentIds: [], vector });

for (const [i, q] of queries.entries()) {
  // Quarry refuses a question over its character limit (InvalidArgument): it finds nothing.
  const refused = q.text.trim().length > DEFAULT_MAX_QUESTION_CHARS;
  const match = refused ? "" : ftsMatchExpression(q.text);
  const bm25 = match ? (search.all(match, DEPTH) as { rowid: number; score: number }[]).map((x) => hitOf.get(x.rowid)!(x.score)) : [];
  const chunks = refused ? [] : ranked(chunkVectors, queryVectors[i]);
  const documents = refused ? [] : ranked(documentVectors, queryVectors[i]);
  const source = {
    dimensions: () => [{ knowledgeBaseId: kb.id, dimension: space.dimension }],
    lists: (request: ListRequest): FetchedLists => ({
      bm25: request.bm25 && bm25.slice(0, request.bm25.limit),
      vector: request.vector && chunks.slice(0, request.vector.limit),
      documentVector: request.documentVector && documents.slice(0, request.documentVector.limit),
    }),
  };
  record("bm25", q.id, bm25.slice(0, TOP_K));
  for (const [name, rule] of rules) {
    const vectorHits: readonly { fileName: string }[] = rule === "ladder" ? await hybridSearch(query("vector", queryVectors[i]), source) : rule(chunks, documents, TOP_K);
    record(`vector: ${name}`, q.id, vectorHits);
    const fused: SearchHit[] =
      rule === "ladder"
        ? await hybridSearch(query("hybrid", queryVectors[i]), source)
        : fuseHits([{ name: "bm25", hits: bm25 }, { name: "vector", hits: rule(chunks, documents, DEPTH) }], { k });
    record(`hybrid: bm25 + ${name}`, q.id, fused);
  }
  // Before: the document list as a third RRF list, placed on the chunk the two chunk lists rank best.
  const chunkLists = [
    { name: "bm25" as const, hits: bm25 },
    { name: "vector" as const, hits: chunks.slice(0, DEPTH) },
  ];
  record("hybrid: three lists (bm25, chunk vectors, document vectors), before", q.id, fuseHits([...chunkLists, { name: "document", hits: placeDocumentHits(documents.slice(0, DEPTH), chunkLists, k) }], { k }));
  // The better cosine, with each document's entry placed by BM25 and the chunk vectors together.
  const placedByBoth = placeDocumentHits(documents.slice(0, DEPTH), chunkLists, k);
  const best = new Map<string, EngineHit>();
  for (const hit of [...chunks.slice(0, DEPTH), ...placedByBoth]) if (!best.has(hit.chunk.id) || hit.score > best.get(hit.chunk.id)!.score) best.set(hit.chunk.id, hit);
  record("hybrid: bm25 + better cosine, document placed by both chunk lists", q.id, fuseHits([chunkLists[0], { name: "vector", hits: byScore([...best.values()]).slice(0, DEPTH) }], { k }));
  if (i % 100 === 0) process.stderr.write(`${i}/${queries.length}\n`);
}

process.stdout.write(`${values.dataset}, base ${values["knowledge-base"]}: ${queries.length} queries, ${rows.length} chunks, ${documentVectors.size} document vectors\n`);
process.stdout.write("| run | nDCG@10 | Recall@100 | MRR@10 |\n| --- | ---: | ---: | ---: |\n");
for (const [name, run] of runs) {
  const m = summarize(dataset.qrels, run);
  process.stdout.write(`| ${name} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} | ${m.mrrAt10.toFixed(4)} |\n`);
}
