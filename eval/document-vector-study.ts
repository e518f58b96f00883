// How a base's chunk vectors and document vectors should make one vector list (issue #14), measured
// on a kept embedded base without the Search RPC: its chunk texts under the same FTS5 definition and
// query expression (as eval/offline-lists.ts), its stored chunk and document vectors searched
// exhaustively (sqlite-vec's kNN is exact), and the lists fused by the search ladder itself
// (hybridSearch over these lists) or by the alternatives below. Every rule scores vector mode (200
// hits, as `quarry eval`) and hybrid (RRF k = 60 of BM25 and that one vector list, 800 per list),
// plus the three-list fusion the ladder did before, so one run compares them on one base.
//
//   node --import tsx eval/document-vector-study.ts --dataset DIR --data-dir D --knowledge-base NAME --cache C [--questions whole|cut]
//
// --questions cut embeds each question's first input's worth of word pieces only (the embedder
// before it read long questions whole), to measure what reading them whole changes. --documents
// whole embeds again, read whole the same way, every stored document vector whose input is longer
// than the model reads (the pipeline cuts them), to measure that too.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import type { Chunk, SearchHit, SearchQuery } from "../lib/domain.ts";
import { documentInput } from "../lib/document-input.ts";
import { catalogModel } from "../lib/models/model-catalog.ts";
import { WordPieceTokenCounter } from "../lib/tokens/wordpiece-token-counter.ts";
import { defaultModelDir, OnnxEmbedder } from "../services/embedder/index.ts";
import { DEFAULT_MAX_QUESTION_CHARS } from "../services/answer/index.ts";
import { keywordTerms, placeDocumentHits, hybridSearch, type FetchedLists, type ListRequest, DEFAULT_RRF_K, fuseHits, type EngineHit } from "../services/index/lab.ts";
import { loadStudyDataset } from "./study-dataset.ts";
import { documentRanking, summarize } from "./metrics.ts";
import { cachedQueryVectors } from "./query-vectors.ts";
import { StudyKeywordTable } from "./study-keyword-table.ts";

const { values } = parseArgs({
  options: { dataset: { type: "string" }, "data-dir": { type: "string" }, "knowledge-base": { type: "string" }, cache: { type: "string", default: "/tmp/document-vector-study" }, questions: { type: "string", default: "whole" }, documents: { type: "string", default: "cut" } },
});
const TOP_K = 200;
const DEPTH = TOP_K * 4;
const k = DEFAULT_RRF_K;
const dataset = await loadStudyDataset("document-vector-study.ts", values.dataset);
const queries = dataset.queries;
await mkdir(values.cache!, { recursive: true });

const db = new Database(join(values["data-dir"]!, "quarry.db"), { readonly: true });
sqliteVec.load(db);
const kb = db.prepare(`SELECT id, embedding_model FROM knowledge_bases WHERE name = ?`).get(values["knowledge-base"]) as { id: string; embedding_model: string };
const space = db.prepare(`SELECT * FROM search_spaces WHERE knowledge_base_id = ?`).get(kb.id) as { vector_table: string; dimension: number };
type Row = { rowid: number; id: string; document_id: string; chunk_index: number; file_name: string; text: string; section_path: string; start_offset: number; end_offset: number };
const rows = db
  .prepare(
    `SELECT rowid, id, document_id, chunk_index, file_name, text, section_path, start_offset, end_offset FROM chunks WHERE knowledge_base_id = ? AND enabled = 1 ORDER BY rowid`,
  )
  .all(kb.id) as Row[];
const floats = (b: Buffer) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
const chunkVectors = new Map<number, Float32Array>();
for (const v of db.prepare(`SELECT rowid, embedding FROM "${space.vector_table}"`).all() as { rowid: number; embedding: Buffer }[]) chunkVectors.set(v.rowid, floats(v.embedding));
const documentVectors = new Map<number, Float32Array>();
for (const v of db.prepare(`SELECT rowid, embedding FROM "${space.vector_table}_docs"`).all() as { rowid: number; embedding: Buffer }[]) documentVectors.set(v.rowid, floats(v.embedding));
process.stderr.write(`${rows.length} chunks, ${chunkVectors.size} chunk vectors, ${documentVectors.size} document vectors\n`);
let chunksOfDocument: Map<string, Row[]> | undefined;
if (values.documents === "whole") await readDocumentsWhole();

/** A document's embedding input rebuilt from its stored chunks, as the pipeline builds it. */
function storedDocumentInput(documentId: string): string {
  if (!chunksOfDocument) {
    chunksOfDocument = new Map();
    for (const r of rows) chunksOfDocument.set(r.document_id, [...(chunksOfDocument.get(r.document_id) ?? []), r]);
  }
  return documentInput(chunksOfDocument.get(documentId)!.map((c) => ({ index: c.chunk_index, text: c.text, start: c.start_offset, end: c.end_offset })));
}
/** Replaces each stored document vector whose input the model cut by one read whole (cached). */
async function readDocumentsWhole(): Promise<void> {
  const file = join(values.cache!, `document-vectors-whole-${kb.embedding_model}-${documentVectors.size}.f32`);
  const owners = [...documentVectors.keys()];
  const cached = await readFile(file).catch(() => undefined);
  let vectors: Float32Array[];
  if (cached) {
    const all = floats(cached);
    vectors = owners.map((_, i) => all.subarray(i * space.dimension, (i + 1) * space.dimension));
  } else {
    const documentOf = new Map(rows.map((r) => [r.rowid, r.document_id]));
    const inputs = owners.map((rowid) => storedDocumentInput(documentOf.get(rowid)!));
    const embedder = await OnnxEmbedder.load(defaultModelDir(kb.embedding_model), { threads: 2, readWhole: ["document"] });
    const limit = embedder.info().maxInputTokens;
    const counter = WordPieceTokenCounter.fromModelDir(defaultModelDir(kb.embedding_model));
    const long = owners.map((_, i) => i).filter((i) => counter.count(inputs[i]) > limit - 2);
    process.stderr.write(`${long.length} of ${owners.length} document inputs are longer than the model reads: embedding them whole\n`);
    const whole = await embedder.embed(long.map((i) => inputs[i]), "document");
    await embedder.close();
    vectors = owners.map((rowid) => documentVectors.get(rowid)!);
    long.forEach((i, j) => (vectors[i] = whole[j]));
    const all = new Float32Array(owners.length * space.dimension);
    vectors.forEach((v, i) => all.set(v, i * space.dimension));
    await writeFile(file, new Uint8Array(all.buffer));
  }
  owners.forEach((rowid, i) => documentVectors.set(rowid, vectors[i]));
}

const hitOf = new Map<number, (score: number) => EngineHit>();
for (const r of rows) {
  const chunk = { id: r.id, documentId: r.document_id, knowledgeBaseId: kb.id, index: r.chunk_index } as Chunk;
  const fileName = r.file_name.replace(/\.(md|txt)$/, "");
  hitOf.set(r.rowid, (score) => ({ chunk, fileName, score }));
}
const withVector = new Set([...documentVectors.keys()].map((rowid) => hitOf.get(rowid)!(0).chunk.documentId));
// Documents the model reads whole (their input within its limit): their vector sees all their chunks see.
const fitsWhole = documentsReadWhole();

function documentsReadWhole(): Set<string> {
  const counter = WordPieceTokenCounter.fromModelDir(defaultModelDir(kb.embedding_model));
  const modelLimit = catalogModel(kb.embedding_model).maxTokens;
  const fits = new Set<string>();
  for (const documentId of withVector) {
    if (counter.count(storedDocumentInput(documentId)) <= modelLimit - 2) fits.add(documentId);
  }
  process.stderr.write(`${fits.size} of ${withVector.size} documents with a vector fit the model's input whole\n`);
  return fits;
}

const fts = new Database(":memory:");
const keywords = new StudyKeywordTable(fts);
keywords.addAll(rows.map((r) => ({ rowid: r.rowid, terms: keywordTerms(r.text, JSON.parse(r.section_path) as string[]) })));

const queryVectors = await cachedQueryVectors(values.cache!, queries.map((q) => q.text), space.dimension, { model: kb.embedding_model, whole: values.questions !== "cut" });

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
    "the document's vector for a document the model reads whole (its chunks dropped), better cosine otherwise",
    (chunks, documents, depth) => {
      const placed = placeDocumentHits(documents.slice(0, depth), [{ name: "vector", hits: chunks.slice(0, depth) }], k);
      const best = new Map<string, EngineHit>();
      for (const hit of [...chunks.filter((h) => !fitsWhole.has(h.chunk.documentId)), ...placed]) {
        if (!best.has(hit.chunk.id) || hit.score > best.get(hit.chunk.id)!.score) best.set(hit.chunk.id, hit);
      }
      return byScore([...best.values()]).slice(0, depth);
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

const wholeCosineCache = new WeakMap<EngineHit[], Map<string, number>>();
/** The document's own cosine in the full document list, or -1 without a document vector. */
function wholeCosine(documents: EngineHit[], documentId: string): number {
  if (!wholeCosineCache.has(documents)) wholeCosineCache.set(documents, new Map(documents.map((hit) => [hit.chunk.documentId, hit.score])));
  return wholeCosineCache.get(documents)!.get(documentId) ?? -1;
}

const fileNameOf = new Map([...hitOf.values()].map((make) => [make(0).chunk.id, make(0).fileName]));

/** Each hit with 1 + the number of distinct other documents above it in its list. */
function documentRanks(hits: EngineHit[]): [EngineHit, number][] {
  const seen = new Set<string>();
  return hits.map((hit) => {
    const rank = seen.size + (seen.has(hit.chunk.documentId) ? 0 : 1);
    seen.add(hit.chunk.documentId);
    return [hit, rank];
  });
}

/** RRF (k = 60) of chunk ids at given ranks. */
function fuseRanks(lists: { id: string; rank: number }[][]): string[] {
  const scores = new Map<string, number>();
  for (const list of lists) {
    const voted = new Set<string>();
    for (const { id, rank } of list) {
      if (voted.has(id)) continue;
      voted.add(id);
      scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank));
    }
  }
  return [...scores.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id);
}

/** RRF (k = 60) of document rankings: a document votes once per list, at the rank of its best chunk. */
function fuseDocuments(rankings: string[][]): string[] {
  const scores = new Map<string, number>();
  for (const ranking of rankings) ranking.forEach((doc, r) => scores.set(doc, (scores.get(doc) ?? 0) + 1 / (k + r + 1)));
  return [...scores.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([doc]) => doc);
}

/**
 * Where hybrid loses BM25's right first document, and why: is the relevant document's evidence
 * split between two of its chunks (BM25's best chunk is not the vector list's best chunk of it)?
 */
const diagnosis = { lost: 0, gained: 0, lostSplit: 0, lostRecoveredByDocumentLevel: 0, gainedLostByDocumentLevel: 0, sharedInTop10: 0 };
function diagnose(qid: string, bm25Docs: string[], hybridDocs: string[], documentLevel: string[], bm25: EngineHit[], vector: EngineHit[]): void {
  const relevant = new Set([...(dataset.qrels.get(qid) ?? new Map<string, number>())].filter(([, grade]) => grade > 0).map(([doc]) => doc));
  const bm25Right = relevant.has(bm25Docs[0]);
  const hybridRight = relevant.has(hybridDocs[0]);
  const documentRight = relevant.has(documentRanking(qid, documentLevel)[0]);
  // How much the two lists agree: documents in both first tens (fusion gains most where they differ).
  const vectorTop = new Set(documentRanking(qid, vector.map((h) => h.fileName)).slice(0, 10));
  diagnosis.sharedInTop10 += bm25Docs.slice(0, 10).filter((doc) => vectorTop.has(doc)).length / queries.length;
  if (bm25Right && !hybridRight) {
    diagnosis.lost++;
    const gold = bm25Docs[0];
    const bestChunk = (hits: EngineHit[]) => hits.find((h) => h.fileName === gold)?.chunk.id;
    if (bestChunk(bm25) !== bestChunk(vector)) diagnosis.lostSplit++;
    if (documentRight) diagnosis.lostRecoveredByDocumentLevel++;
  }
  if (!bm25Right && hybridRight) {
    diagnosis.gained++;
    if (!documentRight) diagnosis.gainedLostByDocumentLevel++;
  }
}

const runs = new Map<string, Map<string, string[]>>();
const record = (name: string, qid: string, hits: readonly { fileName: string }[]) => {
  if (!runs.has(name)) runs.set(name, new Map());
  runs.get(name)!.set(qid, documentRanking(qid, hits.slice(0, TOP_K).map((hit) => hit.fileName)));
};
const query = (mode: SearchQuery["mode"], vector: Float32Array): SearchQuery => ({ knowledgeBaseIds: [kb.id], text: "q", mode, topK: TOP_K, minScore: 0, documentIds: [], vector });

for (const [i, q] of queries.entries()) {
  // Quarry refuses a question over its character limit (InvalidArgument): it finds nothing.
  const refused = q.text.trim().length > DEFAULT_MAX_QUESTION_CHARS;
  const bm25 = refused ? [] : keywords.search(q.text, DEPTH).map((x) => hitOf.get(x.rowid)!(x.score));
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
  // Fusion at document level: each list's documents in the order of their best chunk, then RRF of documents.
  const betterCosine = byScore(chunks.slice(0, DEPTH).map((hit) => ({ ...hit, score: Math.max(hit.score, wholeCosine(documents, hit.chunk.documentId)) })));
  const documentLevel = fuseDocuments([documentRanking(q.id, bm25.map((h) => h.fileName)), documentRanking(q.id, betterCosine.map((h) => h.fileName))]);
  record("hybrid, document level: RRF of each list's documents (better cosine as the vector list)", q.id, documentLevel.map((fileName) => ({ fileName })));
  // Chunk-level RRF in which a chunk's rank in a list counts the other documents above it, so a
  // document's further chunks do not push other documents down (each chunk keeps its own evidence).
  const byDocumentRank = (hits: EngineHit[]) => documentRanks(hits).map(([hit, rank]) => ({ id: hit.chunk.id, rank }));
  record(
    "hybrid, chunk level with document ranks (better cosine as the vector list)",
    q.id,
    fuseRanks([byDocumentRank(bm25), byDocumentRank(betterCosine)]).map((id) => ({ fileName: fileNameOf.get(id)! })),
  );
  diagnose(q.id, runs.get("bm25")!.get(q.id)!, runs.get("hybrid: bm25 + better cosine of chunk and document (the ladder's rule)")!.get(q.id)!, documentLevel, bm25, betterCosine);
  if (i % 100 === 0) process.stderr.write(`${i}/${queries.length}\n`);
}

process.stdout.write(`${values.dataset}, base ${values["knowledge-base"]} (${kb.embedding_model}, questions ${values.questions}, documents ${values.documents}): ${queries.length} queries, ${rows.length} chunks, ${documentVectors.size} document vectors\n`);
process.stdout.write("| run | nDCG@10 | Recall@100 | MRR@10 |\n| --- | ---: | ---: | ---: |\n");
for (const [name, run] of runs) {
  const m = summarize(dataset.qrels, run);
  process.stdout.write(`| ${name} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} | ${m.mrrAt10.toFixed(4)} |\n`);
}
process.stdout.write(
  `\nFirst document, hybrid (the ladder) against bm25: lost ${diagnosis.lost} (the relevant document's best bm25 chunk is not its best vector chunk in ${diagnosis.lostSplit}; ` +
    `document-level fusion keeps ${diagnosis.lostRecoveredByDocumentLevel} of them right), gained ${diagnosis.gained} (document-level fusion loses ${diagnosis.gainedLostByDocumentLevel} of them); ` +
    `documents in both lists' first ten: ${diagnosis.sharedInTop10.toFixed(2)} on average\n`,
);
