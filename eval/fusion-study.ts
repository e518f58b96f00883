// How hybrid should fuse its two lists, and which English model is worth its cost, measured offline
// on a documented sample of a BEIR set: the questions (all, or a hash-chosen --questions), every
// document judged relevant to them, and hash-chosen distractors up to --docs. Each document is cut
// as an ingest cuts it (the eval's Markdown text, the Markdown parser, the chunker at the model's
// token count) and each chunk is keyword-indexed in the engine's FTS5 table (heading path included)
// and embedded with each --model. The BM25 list and the exact kNN list of chunks (chunk vectors
// only; no document vectors) are computed once per set and model, then fused many ways by the
// product's own functions (fuseReciprocalRank, fuseConvex) and by a prototype of DBSF, with the hybrid gate's weight 0 for a
// question the model reads less than half of and no list for a question over Quarry's length limit.
// A document scores as its best chunk. --backend opensearch (repeatable with sqlite) also imports the
// same chunks and vectors into a private OpenSearch index through the product's engine and takes its
// BM25 and kNN lists from engine.search (engineLists); --backend sqlite-exact and sqlite-hnsw do the same
// through the embedded SqliteSearchEngine on a temporary file, with every base's kNN exact or on the
// approximate (HNSW) index, so the index's effect on nDCG is read on the whole set. Vectors are cached
// on disk (vector-cache.ts).
//
// With two models, their chunk batches are embedded alternately, so both see the same machine load;
// chunks/s and the p50 of embedding one question are reported side by side.
//
//   node --import tsx eval/fusion-study.ts --dataset ../shared/eval/scifact --docs 2000 \
//     --model all-MiniLM-L6-v2-int8 --model bge-small-en-v1.5
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { withHeadingPath } from "../lib/chunk-context.ts";
import { catalogModel } from "../lib/models/model-catalog.ts";
import { WordPieceTokenCounter } from "../lib/tokens/wordpiece-token-counter.ts";
import { DEFAULT_MAX_QUESTION_CHARS, MIN_KNOWN_TOKEN_SHARE } from "../services/answer/index.ts";
import { chunkDocument, defaultChunkingSettings } from "../services/chunker/index.ts";
import { defaultModelDir, KnownTokenShare, OnnxEmbedder } from "../services/embedder/index.ts";
import { DEFAULT_APPROXIMATE_KNN, DEFAULT_RRF_K, fuseConvex, fuseReciprocalRank, keywordTerms, type ScoreNormalisation } from "../services/index/lab.ts";
import { parseMarkdown } from "../services/parser/index.ts";
import Database from "better-sqlite3";
import { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import type { ChunkDraft, EmbeddedChunk, SearchHit } from "../lib/domain.ts";
import { deleteOpenSearchNamespace, openDatabase, type SearchEngine, SqliteSearchEngine } from "../services/index/index.ts";
import { OpenSearchSearchEngine, type ImportedDocumentChunks } from "../services/index/lab.ts";
import type { BeirDocument } from "./beir-dataset.ts";
import { documentRanking, percentile, summarize } from "./metrics.ts";
import { documentText } from "./run-eval.ts";
import { sampleByHash } from "./score-distribution.ts";
import { loadStudyDataset } from "./study-dataset.ts";
import { StudyKeywordTable } from "./study-keyword-table.ts";
import { VectorCache } from "./vector-cache.ts";

const { values } = parseArgs({
  options: {
    dataset: { type: "string" },
    model: { type: "string", multiple: true },
    docs: { type: "string", default: "2000" },
    questions: { type: "string" },
    depth: { type: "string", default: "200" },
    threads: { type: "string", default: "1" },
    cache: { type: "string", default: "/tmp/quarry-fusion-study" },
    backend: { type: "string", multiple: true },
    json: { type: "boolean", default: false },
  },
});
const depth = Number(values.depth);
const setName = basename(values.dataset ?? "");
const dataset = await loadStudyDataset("fusion-study.ts", values.dataset);
const questions = values.questions ? sampleByHash(dataset.queries, (q) => q.id, Number(values.questions)) : dataset.queries;
const qrels = new Map(questions.map((q) => [q.id, dataset.qrels.get(q.id)!]));
const relevant = new Set(questions.flatMap((q) => [...(dataset.qrels.get(q.id)?.keys() ?? [])]));
const distractors = sampleByHash(
  dataset.corpus.filter((d) => !relevant.has(d.id)),
  (d) => d.id,
  Math.max(0, Number(values.docs) - relevant.size),
);
const docs = [...dataset.corpus.filter((d) => relevant.has(d.id)), ...distractors];
const models = values.model ?? ["all-MiniLM-L6-v2-int8"];
const BACKENDS = ["sqlite", "opensearch", "sqlite-exact", "sqlite-hnsw"] as const;
type Backend = (typeof BACKENDS)[number];
const backends = (values.backend ?? ["sqlite"]).map((b): Backend => {
  if (!(BACKENDS as readonly string[]).includes(b)) throw new Error(`--backend ${b}: one of ${BACKENDS.join(", ")}`);
  return b as Backend;
});
process.stderr.write(`${setName}: ${questions.length} questions, ${docs.length} documents (${relevant.size} relevant), models ${models.join(", ")}\n`);

interface Unit {
  doc: string;
  text: string;
  sectionPath: string[];
  /** The chunk as the chunker cut it, for the backends that store it through the product's engine. */
  draft: ChunkDraft;
}

function unitsOf(model: string, documents: readonly BeirDocument[]): Unit[] {
  const manifest = catalogModel(model);
  const counter = WordPieceTokenCounter.fromModelDir(defaultModelDir(model));
  const settings = defaultChunkingSettings(manifest.maxTokens);
  return documents.flatMap((doc) => {
    const parsed = { ...parseMarkdown(documentText(doc)), mimeType: "text/markdown", parser: "builtin:markdown" };
    return chunkDocument(parsed, settings, counter, { maxInputTokens: manifest.maxTokens }).map((c) => ({ doc: doc.id, text: c.text, sectionPath: c.sectionPath, draft: c }));
  });
}

type Hit = { id: string; score: number };
interface ModelLists {
  model: string;
  backend: Backend;
  chunks: number;
  chunksPerSecond: number;
  queryEmbedP50Ms: number;
  units: Unit[];
  bm25: Hit[][];
  vector: Hit[][];
  /** The hybrid gate's vector weight per question: 0 when the model reads less than half of it. */
  gate: number[];
}

/** Vectors of the units and questions of each model, from the on-disk cache where it has them. */
interface ModelVectors {
  chunks: Float32Array[];
  questions: Float32Array[];
  /** Chunks embedded in this run and the seconds they took (0, 0 when all came from the cache). */
  embedded: number;
  seconds: number;
  questionMs: number[];
}

/**
 * Embeds what the cache lacks, each model's chunk batches alternating, so two models see the same
 * machine load; questions one at a time, as a search embeds its question.
 */
async function embedSideBySide(unitSets: Unit[][]): Promise<ModelVectors[]> {
  const caches = await Promise.all(models.map((m) => VectorCache.open(values.cache!, m, setName, catalogModel(m).dimension)));
  const texts = unitSets.map((units) => units.map((u) => withHeadingPath(u.text, u.sectionPath)));
  const missing = texts.map((t, m) => [...new Set(t.filter((x) => !caches[m].get("document", x)))]);
  const missingQuestions = models.map((_, m) => questions.filter((q) => !caches[m].get("query", q.text)));
  const out: ModelVectors[] = models.map(() => ({ chunks: [], questions: [], embedded: 0, seconds: 0, questionMs: [] }));
  if (missing.some((x) => x.length > 0) || missingQuestions.some((x) => x.length > 0)) {
    const threads = Number(values.threads);
    const embedders = await Promise.all(models.map((m) => OnnxEmbedder.load(defaultModelDir(m), { threads })));
    try {
      const batch = 64;
      const longest = Math.max(...missing.map((x) => x.length));
      for (let start = 0; start < longest; start += batch) {
        for (const [m, todo] of missing.entries()) {
          const slice = todo.slice(start, start + batch);
          if (slice.length === 0) continue;
          const began = performance.now();
          const vectors = await embedders[m].embed(slice, "document");
          out[m].seconds += (performance.now() - began) / 1000;
          out[m].embedded += slice.length;
          await caches[m].put("document", slice, vectors);
        }
        process.stderr.write(`\r  embedded ${Math.min(longest, start + batch)}/${longest} new chunks a model`);
      }
      process.stderr.write("\n");
      for (const [m, embedder] of embedders.entries()) {
        for (const q of missingQuestions[m]) {
          const began = performance.now();
          const [v] = await embedder.embed([q.text], "query");
          out[m].questionMs.push(performance.now() - began);
          await caches[m].put("query", [q.text], [v]);
        }
      }
    } finally {
      await Promise.all(embedders.map((e) => e.close()));
    }
  }
  for (const [m, cache] of caches.entries()) {
    out[m].chunks = texts[m].map((t) => cache.get("document", t)!);
    out[m].questions = questions.map((q) => cache.get("query", q.text)!);
  }
  return out;
}

/** Quarry refuses a question over its character limit (InvalidArgument): it finds nothing. */
const refused = (text: string) => text.trim().length > DEFAULT_MAX_QUESTION_CHARS;

async function computeLists(): Promise<ModelLists[]> {
  const unitSets = models.map((m) => unitsOf(m, docs));
  const embedded = await embedSideBySide(unitSets);
  const out: ModelLists[] = [];
  for (const [m, model] of models.entries()) {
    const units = unitSets[m];
    const { chunks, questions: questionVectors } = embedded[m];
    const coverage = KnownTokenShare.fromModelDir(defaultModelDir(model));
    const gate = questions.map((q) => (refused(q.text) || coverage.of(q.text) >= MIN_KNOWN_TOKEN_SHARE ? 1 : 0));
    const stats = { model, chunks: units.length, chunksPerSecond: embedded[m].embedded / embedded[m].seconds, queryEmbedP50Ms: percentile(embedded[m].questionMs, 50), units, gate };
    for (const backend of backends) {
      const lists = backend === "sqlite" ? sqliteLists(units, chunks, questionVectors) : await engineLists(backend, model, units, chunks, questionVectors);
      out.push({ ...stats, backend, ...lists });
    }
  }
  return out;
}

/** SQLite's arm: BM25 from the engine's FTS5 table, exact kNN over the chunk vectors (as sqlite-vec's flat scan). */
function sqliteLists(units: Unit[], chunks: Float32Array[], questionVectors: Float32Array[]): { bm25: Hit[][]; vector: Hit[][] } {
  const table = new StudyKeywordTable(new Database(":memory:"));
  table.addAll(units.map((u, i) => ({ rowid: i + 1, terms: keywordTerms(u.text, u.sectionPath) })));
  const bm25: Hit[][] = [];
  const vector: Hit[][] = [];
  questions.forEach((q, i) => {
    if (refused(q.text)) {
      bm25.push([]);
      vector.push([]);
      return;
    }
    bm25.push(table.search(q.text, depth).map((r) => ({ id: String(r.rowid - 1), score: r.score })));
    const qv = questionVectors[i];
    const dense = chunks.map((cv, c) => {
      let dot = 0;
      for (let k = 0; k < qv.length; k++) dot += cv[k] * qv[k];
      return { id: String(c), score: dot };
    });
    vector.push(dense.sort((a, b) => b.score - a.score).slice(0, depth));
  });
  return { bm25, vector };
}

/** A product engine to import the chunks into, and how to remove what it stored. */
interface StudyEngine {
  engine: SearchEngine;
  dispose(): Promise<void>;
}

async function studyEngine(backend: Exclude<Backend, "sqlite">): Promise<StudyEngine> {
  if (backend === "opensearch") {
    const url = process.env.OPENSEARCH_URL?.trim();
    if (!url) throw new Error('--backend opensearch needs OPENSEARCH_URL (eval "$(deploy/local/engines.sh env)")');
    const prefix = `quarry-fusion-study-${randomBytes(4).toString("hex")}-`;
    const engine = new OpenSearchSearchEngine(new OpenSearchClient({ node: url }), { indexPrefix: `${prefix}chunks-`, ownsClient: true });
    return { engine, dispose: async () => (await engine.close(), await deleteOpenSearchNamespace(url, prefix)) };
  }
  const dir = await mkdtemp(join(tmpdir(), "quarry-fusion-study-"));
  // exactBelow 0: every base on the index (or none), whatever the set's size, so the two arms differ only there.
  const vectorIndex = { ...DEFAULT_APPROXIMATE_KNN, mode: backend === "sqlite-hnsw" ? ("hnsw" as const) : ("exact" as const), exactBelow: 0 };
  const engine = new SqliteSearchEngine(openDatabase(join(dir, "quarry.db")), { ownsDatabase: true, vectorIndex });
  return { engine, dispose: async () => (await engine.close(), await rm(dir, { recursive: true, force: true })) };
}

/**
 * An engine's arm: the same chunks and vectors imported through the product's engine
 * (importDocuments: the engine's own segmenting, stemming and mapping), then each question asked
 * through engine.search in bm25 mode and in vector mode, as deep as --depth: OpenSearch's own BM25
 * body and Lucene HNSW kNN query, or SQLite's FTS5 and its exact scan or approximate index. What the
 * engine stored is removed at the end.
 */
async function engineLists(backend: Exclude<Backend, "sqlite">, model: string, units: Unit[], chunks: Float32Array[], questionVectors: Float32Array[]): Promise<{ bm25: Hit[][]; vector: Hit[][] }> {
  const { engine, dispose } = await studyEngine(backend);
  const kb = "kb_fusion_study";
  try {
    await engine.ensureKnowledgeBase(kb, catalogModel(model).dimension);
    const byDoc = new Map<string, EmbeddedChunk[]>();
    units.forEach((u, i) => {
      const chunk: EmbeddedChunk = { ...u.draft, id: `c${i}`, documentId: u.doc, knowledgeBaseId: kb, vector: chunks[i] };
      byDoc.set(u.doc, [...(byDoc.get(u.doc) ?? []), chunk]);
    });
    const documents: ImportedDocumentChunks[] = [...byDoc].map(([documentId, c]) => ({ documentId, fileName: `${documentId}.md`, enabled: true, chunks: c }));
    for (let i = 0; i < documents.length; i += 250) {
      await engine.importDocuments(kb, documents.slice(i, i + 250));
      process.stderr.write(`\r  ${backend}: imported ${Math.min(documents.length, i + 250)}/${documents.length} documents`);
    }
    await engine.finishImport(kb);
    process.stderr.write("\n");
    const unitOf = (h: SearchHit) => String(Number(h.chunk.id.slice(1)));
    const bm25: Hit[][] = [];
    const vector: Hit[][] = [];
    for (const [i, q] of questions.entries()) {
      if (refused(q.text)) {
        bm25.push([]);
        vector.push([]);
        continue;
      }
      const base = { knowledgeBaseIds: [kb], text: q.text, topK: depth, minScore: 0, documentIds: [] };
      const keyword = await engine.search({ ...base, mode: "bm25" });
      const dense = await engine.search({ ...base, mode: "vector", vector: questionVectors[i] });
      bm25.push(keyword.map((h) => ({ id: unitOf(h), score: h.explain?.bm25Score ?? h.score })));
      vector.push(dense.map((h) => ({ id: unitOf(h), score: h.explain?.vectorScore ?? h.score })));
      if (i % 50 === 49) process.stderr.write(`\r  ${backend}: asked ${i + 1}/${questions.length} questions`);
    }
    process.stderr.write("\n");
    return { bm25, vector };
  } finally {
    await dispose();
  }
}

type Fuse = (bm25: Hit[], vector: Hit[], gate: number) => { id: string }[];
const rrf: Fuse = (bm25, vector, gate) =>
  fuseReciprocalRank(
    [
      { name: "bm25", hits: bm25 },
      { name: "vector", hits: vector, weight: gate },
    ],
    DEFAULT_RRF_K,
  ).filter((e) => e.fusedScore > 0);
const convex =
  (alpha: number, normalisation: ScoreNormalisation): Fuse =>
  (bm25, vector, gate) =>
    fuseConvex(
      [
        { name: "bm25", hits: bm25 },
        { name: "vector", hits: vector, weight: gate },
      ],
      { alpha, normalisation },
    ).filter((e) => e.fusedScore > 0 || gate === 0);

/**
 * Distribution-based score fusion (Qdrant's DBSF, 2024): each list's scores mapped onto [0, 1] by
 * the list's own mean ± 3 standard deviations (clipped), then summed with equal weights — no weight
 * to choose. A prototype here; the product fuses by rrf or convex.
 */
const dbsf: Fuse = (bm25, vector, gate) => {
  const fused = new Map<string, number>();
  for (const [hits, weight] of [[bm25, 1], [vector, gate]] as const) {
    if (hits.length === 0 || weight === 0) continue;
    const mean = hits.reduce((sum, h) => sum + h.score, 0) / hits.length;
    const sd = Math.sqrt(hits.reduce((sum, h) => sum + (h.score - mean) ** 2, 0) / hits.length);
    const low = mean - 3 * sd;
    for (const h of hits) {
      const scaled = sd === 0 ? 1 : Math.min(1, Math.max(0, (h.score - low) / (6 * sd)));
      fused.set(h.id, (fused.get(h.id) ?? 0) + weight * scaled);
    }
  }
  return [...fused].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => ({ id }));
};

const RULES: [string, Fuse][] = [
  ["bm25", (bm25) => bm25],
  ["vector", (_, vector) => vector],
  ["rrf k=60", rrf],
  ["convex theoretical-min α=0.8", convex(0.8, "theoretical-min")],
  ["convex min-max α=0.8", convex(0.8, "min-max")],
  ["dbsf (mean ± 3σ, equal weights)", dbsf],
  ...[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9].flatMap((a): [string, Fuse][] => [
    [`convex theoretical-min α=${a}`, convex(a, "theoretical-min")],
    [`convex min-max α=${a}`, convex(a, "min-max")],
  ]),
];

const lists = await computeLists();
const rows: string[] = [];
for (const l of lists) {
  process.stdout.write(`\n${setName}, ${l.model}, ${l.backend}: ${l.chunks} chunks, ${l.chunksPerSecond.toFixed(1)} chunks/s, question embedding p50 ${l.queryEmbedP50Ms.toFixed(1)} ms\n`);
  for (const [rule, fuse] of RULES) {
    const runs = new Map(
      questions.map((q, i) => [
        q.id,
        documentRanking(
          q.id,
          fuse(l.bm25[i], l.vector[i], l.gate[i]).map((e) => l.units[Number(e.id)].doc),
        ),
      ]),
    );
    const m = summarize(qrels, runs);
    const row = { set: setName, model: l.model, backend: l.backend, rule, ndcgAt10: m.ndcgAt10, recallAt100: m.recallAt100, questions: questions.length, docs: docs.length, chunks: l.chunks, chunksPerSecond: l.chunksPerSecond, queryEmbedP50Ms: l.queryEmbedP50Ms };
    rows.push(JSON.stringify(row));
    process.stdout.write(`| ${setName} | ${l.model} | ${l.backend} | ${rule} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} |\n`);
  }
}
if (values.json) await writeFile(join(values.cache!, `fusion-study-${setName}-rows.jsonl`), rows.join("\n") + "\n");
