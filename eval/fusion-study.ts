// How hybrid should fuse its two lists, and which English model is worth its cost, measured offline
// on a documented sample of a BEIR set: the questions (all, or a hash-chosen --questions), every
// document judged relevant to them, and hash-chosen distractors up to --docs. Each document is cut
// as an ingest cuts it (the eval's Markdown text, the Markdown parser, the chunker at the model's
// token count) and each chunk is keyword-indexed in the engine's FTS5 table (heading path included)
// and embedded with each --model. The BM25 list and the exact kNN list of chunks (chunk vectors
// only; no document vectors) are computed once per set and model, then fused many ways by the
// product's own functions (fuseReciprocalRank, fuseConvex), with the hybrid gate's weight 0 for a
// question the model reads less than half of and no list for a question over Quarry's length limit.
// A document scores as its best chunk.
//
// With two models, their chunk batches are embedded alternately, so both see the same machine load;
// chunks/s and the p50 of embedding one question are reported side by side.
//
//   node --import tsx eval/fusion-study.ts --dataset ../shared/eval/scifact --docs 2000 \
//     --model all-MiniLM-L6-v2-int8 --model bge-small-en-v1.5
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { withHeadingPath } from "../lib/chunk-context.ts";
import { catalogModel } from "../lib/models/model-catalog.ts";
import { WordPieceTokenCounter } from "../lib/tokens/wordpiece-token-counter.ts";
import { DEFAULT_MAX_QUESTION_CHARS, MIN_KNOWN_TOKEN_SHARE } from "../services/answer/index.ts";
import { chunkDocument, defaultChunkingSettings } from "../services/chunker/index.ts";
import { defaultModelDir, KnownTokenShare, OnnxEmbedder } from "../services/embedder/index.ts";
import { DEFAULT_RRF_K, fuseConvex, fuseReciprocalRank, keywordTerms, type ScoreNormalisation } from "../services/index/lab.ts";
import { parseMarkdown } from "../services/parser/index.ts";
import Database from "better-sqlite3";
import type { BeirDocument } from "./beir-dataset.ts";
import { documentRanking, percentile, summarize } from "./metrics.ts";
import { documentText } from "./run-eval.ts";
import { sampleByHash } from "./score-distribution.ts";
import { loadStudyDataset } from "./study-dataset.ts";
import { StudyKeywordTable } from "./study-keyword-table.ts";

const { values } = parseArgs({
  options: {
    dataset: { type: "string" },
    model: { type: "string", multiple: true },
    docs: { type: "string", default: "2000" },
    questions: { type: "string" },
    depth: { type: "string", default: "200" },
    threads: { type: "string", default: "1" },
    cache: { type: "string", default: "/tmp/quarry-fusion-study" },
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
process.stderr.write(`${setName}: ${questions.length} questions, ${docs.length} documents (${relevant.size} relevant), models ${models.join(", ")}\n`);

interface Unit {
  doc: string;
  text: string;
  sectionPath: string[];
}

function unitsOf(model: string, documents: readonly BeirDocument[]): Unit[] {
  const manifest = catalogModel(model);
  const counter = WordPieceTokenCounter.fromModelDir(defaultModelDir(model));
  const settings = defaultChunkingSettings(manifest.maxTokens);
  return documents.flatMap((doc) => {
    const parsed = { ...parseMarkdown(documentText(doc)), mimeType: "text/markdown", parser: "builtin:markdown" };
    return chunkDocument(parsed, settings, counter, { maxInputTokens: manifest.maxTokens }).map((c) => ({ doc: doc.id, text: c.text, sectionPath: c.sectionPath }));
  });
}

type Hit = { id: string; score: number };
interface ModelLists {
  model: string;
  chunks: number;
  chunksPerSecond: number;
  queryEmbedP50Ms: number;
  units: Unit[];
  bm25: Hit[][];
  vector: Hit[][];
  /** The hybrid gate's vector weight per question: 0 when the model reads less than half of it. */
  gate: number[];
}

/** Embeds each model's chunks batch by batch, alternating models, and times each model's share. */
async function embedSideBySide(embedders: OnnxEmbedder[], unitSets: Unit[][]): Promise<{ vectors: Float32Array[][]; seconds: number[] }> {
  const batch = 64;
  const vectors: Float32Array[][] = unitSets.map(() => []);
  const seconds = unitSets.map(() => 0);
  const longest = Math.max(...unitSets.map((u) => u.length));
  for (let start = 0; start < longest; start += batch) {
    for (const [m, units] of unitSets.entries()) {
      const slice = units.slice(start, start + batch);
      if (slice.length === 0) continue;
      const began = performance.now();
      vectors[m].push(...(await embedders[m].embed(slice.map((u) => withHeadingPath(u.text, u.sectionPath)), "document")));
      seconds[m] += (performance.now() - began) / 1000;
    }
    process.stderr.write(`\r  embedded ${Math.min(longest, start + batch)}/${longest} chunks a model`);
  }
  process.stderr.write("\n");
  return { vectors, seconds };
}

async function computeLists(): Promise<ModelLists[]> {
  const key = createHash("sha256").update(JSON.stringify([setName, models, values.docs, values.questions ?? "all", depth])).digest("hex").slice(0, 16);
  const file = join(values.cache!, `fusion-study-${setName}-${key}.json`);
  const cached = await readFile(file, "utf8").catch(() => undefined);
  if (cached) {
    process.stderr.write(`lists from ${file}\n`);
    return JSON.parse(cached) as ModelLists[];
  }
  const threads = Number(values.threads);
  const embedders = await Promise.all(models.map((m) => OnnxEmbedder.load(defaultModelDir(m), { threads })));
  try {
    const unitSets = models.map((m) => unitsOf(m, docs));
    const { vectors, seconds } = await embedSideBySide(embedders, unitSets);
    const out: ModelLists[] = [];
    // Questions one at a time, models alternating, as a search embeds its question.
    const questionMs: number[][] = models.map(() => []);
    const questionVectors: Float32Array[][] = models.map(() => []);
    for (const q of questions) {
      for (const [m, embedder] of embedders.entries()) {
        const began = performance.now();
        const [v] = await embedder.embed([q.text], "query");
        questionMs[m].push(performance.now() - began);
        questionVectors[m].push(v);
      }
    }
    for (const [m, model] of models.entries()) {
      const units = unitSets[m];
      const table = new StudyKeywordTable(new Database(":memory:"));
      table.addAll(units.map((u, i) => ({ rowid: i + 1, terms: keywordTerms(u.text, u.sectionPath) })));
      const coverage = KnownTokenShare.fromModelDir(defaultModelDir(model));
      const bm25: Hit[][] = [];
      const vector: Hit[][] = [];
      const gate: number[] = [];
      questions.forEach((q, i) => {
        // Quarry refuses a question over its character limit (InvalidArgument): it finds nothing.
        if (q.text.trim().length > DEFAULT_MAX_QUESTION_CHARS) {
          bm25.push([]);
          vector.push([]);
          gate.push(1);
          return;
        }
        bm25.push(table.search(q.text, depth).map((r) => ({ id: String(r.rowid - 1), score: r.score })));
        const qv = questionVectors[m][i];
        const dense = vectors[m].map((cv, c) => {
          let dot = 0;
          for (let k = 0; k < qv.length; k++) dot += cv[k] * qv[k];
          return { id: String(c), score: dot };
        });
        vector.push(dense.sort((a, b) => b.score - a.score).slice(0, depth));
        gate.push(coverage.of(q.text) >= MIN_KNOWN_TOKEN_SHARE ? 1 : 0);
      });
      out.push({
        model,
        chunks: units.length,
        chunksPerSecond: units.length / seconds[m],
        queryEmbedP50Ms: percentile(questionMs[m], 50),
        units,
        bm25,
        vector,
        gate,
      });
    }
    await mkdir(values.cache!, { recursive: true });
    await writeFile(file, JSON.stringify(out));
    return out;
  } finally {
    await Promise.all(embedders.map((e) => e.close()));
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

const RULES: [string, Fuse][] = [
  ["bm25", (bm25) => bm25],
  ["vector", (_, vector) => vector],
  ["rrf k=60", rrf],
  ["convex theoretical-min α=0.8", convex(0.8, "theoretical-min")],
  ["convex min-max α=0.8", convex(0.8, "min-max")],
  ...[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9].flatMap((a): [string, Fuse][] => [
    [`convex theoretical-min α=${a}`, convex(a, "theoretical-min")],
    [`convex min-max α=${a}`, convex(a, "min-max")],
  ]),
];

const lists = await computeLists();
const rows: string[] = [];
for (const l of lists) {
  process.stdout.write(`\n${setName}, ${l.model}: ${l.chunks} chunks, ${l.chunksPerSecond.toFixed(1)} chunks/s, question embedding p50 ${l.queryEmbedP50Ms.toFixed(1)} ms\n`);
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
    const row = { set: setName, model: l.model, rule, ndcgAt10: m.ndcgAt10, recallAt100: m.recallAt100, questions: questions.length, docs: docs.length, chunks: l.chunks, chunksPerSecond: l.chunksPerSecond, queryEmbedP50Ms: l.queryEmbedP50Ms };
    rows.push(JSON.stringify(row));
    process.stdout.write(`| ${setName} | ${l.model} | ${rule} | ${m.ndcgAt10.toFixed(4)} | ${m.recallAt100.toFixed(4)} |\n`);
  }
}
if (values.json) await writeFile(join(values.cache!, `fusion-study-${setName}-rows.jsonl`), rows.join("\n") + "\n");
