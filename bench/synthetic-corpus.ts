// A synthetic corpus for the query benchmark, loaded straight into a store: embedding 100k chunks
// with the local model would take hours on 2 cores, and the query benchmark measures search, not
// embedding.
//
// Text: real sentences, recombined. Every source document (a SciFact abstract, or a run of 20
// consecutive cMedIR page titles, which sit next to each other because they answer the same query)
// is assigned to one of `topics` clusters; a chunk draws 3–6 English sentences, or 4–8 Chinese
// titles, from documents of one cluster. BM25 thus sees real vocabulary, real term frequencies and
// real document lengths, and related words co-occur as they do in the sources.
//
// Vectors: each cluster has a random unit centroid c; a chunk's vector is normalize(√w·c + √(1−w)·r)
// with r a fresh random unit vector and w = topicWeight (0.5 by default), so chunks of one cluster
// have cosine ≈ w with each other and ≈ 0 across clusters — neighbourhoods like a real embedding
// space's, at the cost of a few random numbers per dimension. Everything comes from one seeded
// generator, so the same seed gives the same corpus.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../lib/config.ts";
import type { EmbeddedChunk } from "../lib/domain.ts";
import type { SearchEngine } from "../services/index/index.ts";

export interface SentencePools {
  /** Sentences grouped by source document. */
  english: string[][];
  chinese: string[][];
}

export interface SyntheticCorpusOptions {
  chunks: number;
  seed: number;
  dimension: number;
  /** Clusters of source documents (and vector centroids); default 64. */
  topics?: number;
  /** Share of chunks drawn from the Chinese pool; default 0.2. */
  chineseShare?: number;
  /** Squared weight of the cluster centroid in each vector; default 0.5. */
  topicWeight?: number;
}

export interface SyntheticChunk {
  text: string;
  vector: Float32Array;
  topic: number;
}

/** mulberry32: a tiny seeded generator, enough for sampling (not for anything secret). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Reads the sentence pools from the BEIR folders under evalDir (scifact/ and cmedir-public/). */
export function loadSentencePools(evalDir: string): SentencePools {
  const english = readJsonl(join(evalDir, "scifact", "corpus.jsonl"))
    .map((doc) => splitEnglishSentences(`${doc.title ?? ""}. ${doc.text ?? ""}`))
    .filter((sentences) => sentences.length > 0);
  const titles = readJsonl(join(evalDir, "cmedir-public", "corpus.jsonl"))
    .map((doc) => String(doc.text ?? "").trim())
    .filter((t) => t.length > 0);
  const chinese: string[][] = [];
  for (let i = 0; i < titles.length; i += 20) chinese.push(titles.slice(i, i + 20));
  return { english, chinese };
}

export function splitEnglishSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=[A-Z0-9(])/)
    .map((s) => s.trim())
    .filter((s) => s.length >= 20 && s !== ".");
}

export function* generateSyntheticChunks(pools: SentencePools, options: SyntheticCorpusOptions): Generator<SyntheticChunk> {
  const topics = options.topics ?? 64;
  const chineseShare = pools.chinese.length === 0 ? 0 : (options.chineseShare ?? 0.2);
  const w = options.topicWeight ?? 0.5;
  if (pools.english.length === 0 && chineseShare < 1) throw new RangeError("the English sentence pool is empty");
  const random = seededRandom(options.seed);
  const gaussian = gaussianFrom(random);
  const byTopic = (docs: string[][]) => {
    const clusters: string[][][] = Array.from({ length: topics }, () => []);
    for (const doc of docs) clusters[Math.floor(random() * topics)].push(doc);
    return clusters;
  };
  const english = byTopic(pools.english);
  const chinese = byTopic(pools.chinese);
  const centroids = Array.from({ length: topics }, () => unitVector(options.dimension, gaussian));
  const [a, b] = [Math.sqrt(w), Math.sqrt(1 - w)];

  for (let n = 0; n < options.chunks; n++) {
    const useChinese = random() < chineseShare;
    const clusters = useChinese ? chinese : english;
    // A cluster can be empty with few source documents; step to the next one that is not.
    let topic = Math.floor(random() * topics);
    while (clusters[topic].length === 0) topic = (topic + 1) % topics;
    const docs = clusters[topic];
    const count = useChinese ? 4 + Math.floor(random() * 5) : 3 + Math.floor(random() * 4);
    const parts: string[] = [];
    for (let i = 0; i < count; i++) {
      const doc = docs[Math.floor(random() * docs.length)];
      parts.push(doc[Math.floor(random() * doc.length)]);
    }
    const noise = unitVector(options.dimension, gaussian);
    const vector = new Float32Array(options.dimension);
    for (let d = 0; d < options.dimension; d++) vector[d] = a * centroids[topic][d] + b * noise[d];
    normalize(vector);
    yield { text: useChinese ? parts.join("。") + "。" : parts.join(" "), vector, topic };
  }
}

export interface BenchQuery {
  text: string;
  language: "en" | "zh";
}

/** Real user queries: SciFact claims and cMedIR searches, sampled with the seed in the corpus's language mix. */
export function loadBenchQueries(evalDir: string, count: number, seed: number, chineseShare = 0.2): BenchQuery[] {
  const english = readJsonl(join(evalDir, "scifact", "queries.jsonl")).map((q) => String(q.text));
  const chinese = readJsonl(join(evalDir, "cmedir-public", "queries.jsonl")).map((q) => String(q.text));
  const random = seededRandom(seed ^ 0x9e3779b9);
  return Array.from({ length: count }, () => {
    const zh = random() < chineseShare;
    const pool = zh ? chinese : english;
    return { text: pool[Math.floor(random() * pool.length)], language: zh ? "zh" : "en" } as BenchQuery;
  });
}

export interface LoadOptions {
  knowledgeBaseId: string;
  /** Chunks stored per synthetic document (one replaceDocumentChunks call each). */
  chunksPerDocument: number;
  onProgress?(loaded: number): void;
}

/** Writes the chunks through the engine's own write path, a document at a time. */
export async function loadIntoEngine(engine: SearchEngine, chunks: Iterable<SyntheticChunk>, options: LoadOptions): Promise<number> {
  let loaded = 0;
  let batch: EmbeddedChunk[] = [];
  let documentNumber = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const documentId = batch[0].documentId;
    await engine.replaceDocumentChunks(options.knowledgeBaseId, documentId, `synthetic-${documentNumber}.txt`, batch);
    loaded += batch.length;
    options.onProgress?.(loaded);
    batch = [];
    documentNumber++;
  };
  for (const chunk of chunks) {
    const documentId = `doc_synthetic_${documentNumber.toString().padStart(6, "0")}`;
    const index = batch.length;
    batch.push({
      id: `${documentId}_${index}`,
      documentId,
      knowledgeBaseId: options.knowledgeBaseId,
      index,
      text: chunk.text,
      // A rough count (words, or characters for Chinese): nothing in search reads it.
      tokenCount: chunk.text.split(/\s+/).length,
      page: 0,
      pageEnd: 0,
      sectionPath: [],
      start: 0,
      end: chunk.text.length,
      vector: chunk.vector,
    });
    if (batch.length >= options.chunksPerDocument) await flush();
  }
  await flush();
  return loaded;
}

function readJsonl(file: string): Record<string, unknown>[] {
  if (!existsSync(file)) {
    throw new ConfigError(`${file} is missing: the synthetic corpus and its queries are made from the SciFact and cMedIR sets (../shared/eval; another folder with --eval-dir)`);
  }
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function gaussianFrom(random: () => number): () => number {
  // Box–Muller; 1 − u keeps the logarithm's argument in (0, 1].
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function unitVector(dimension: number, gaussian: () => number): Float32Array {
  const v = new Float32Array(dimension);
  for (let i = 0; i < dimension; i++) v[i] = gaussian();
  return normalize(v);
}

function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
