// Dense retrieval outside Quarry, with the same embedding model: the yardstick Quarry's vector list
// is measured against. Each document is represented by one or more texts (the whole document,
// or its chunks); a document scores as its best text's cosine (MaxP), searched exhaustively, so
// the figure measures the representation and nothing else (no index, no fusion, no cut-off).
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Embedder } from "../services/embedder/index.ts";
import type { BeirDocument, BeirQuery } from "./beir-dataset.ts";
import { documentRanking } from "./metrics.ts";

/** A document's texts to embed: one for a whole-document vector, several for its chunks. */
export type Representation = (doc: BeirDocument) => string[];

/**
 * BEIR's own whole-document text for a dense model (title, a space, the text): the model reads
 * its first maxInputTokens word pieces, the rest is cut, as the baseline of issue #14 did.
 */
export const wholeDocument: Representation = (doc) => [`${doc.title} ${doc.text}`.trim()];

export interface EmbeddedUnits {
  /** Row i of `vectors` belongs to document docIds[owner[i]]. */
  owner: Int32Array;
  docIds: string[];
  vectors: Float32Array;
  dimension: number;
}

/**
 * Embeds every document's texts, in batches; with a cache file the vectors are read back instead
 * of embedded again (the cache is keyed by the caller: one file per representation and model).
 */
export async function embedCorpus(
  embedder: Embedder,
  docs: readonly BeirDocument[],
  represent: Representation,
  options: { cacheFile?: string; onProgress?: (done: number, total: number) => void } = {},
): Promise<EmbeddedUnits> {
  const texts: string[] = [];
  const owner: number[] = [];
  docs.forEach((doc, d) => {
    for (const text of represent(doc)) {
      texts.push(text);
      owner.push(d);
    }
  });
  const dimension = embedder.info().dimension;
  const docIds = docs.map((d) => d.id);
  if (options.cacheFile) {
    const cached = await readFile(options.cacheFile).catch(() => undefined);
    if (cached && cached.byteLength === texts.length * dimension * 4) {
      const vectors = new Float32Array(cached.buffer.slice(cached.byteOffset, cached.byteOffset + cached.byteLength));
      return { owner: Int32Array.from(owner), docIds, vectors, dimension };
    }
  }
  const vectors = new Float32Array(texts.length * dimension);
  const batch = 256;
  for (let start = 0; start < texts.length; start += batch) {
    const out = await embedder.embed(texts.slice(start, start + batch), "document");
    out.forEach((v, i) => vectors.set(v, (start + i) * dimension));
    options.onProgress?.(Math.min(start + batch, texts.length), texts.length);
  }
  if (options.cacheFile) {
    await mkdir(dirname(options.cacheFile), { recursive: true });
    await writeFile(options.cacheFile, new Uint8Array(vectors.buffer));
  }
  return { owner: Int32Array.from(owner), docIds, vectors, dimension };
}

/** One scored document of a dense ranking. */
export interface DenseHit {
  docId: string;
  score: number;
}

/**
 * Every document's best cosine to the query (vectors are unit length, so the dot product), best
 * first, the first `depth` of them.
 */
export function rankDocuments(units: EmbeddedUnits, query: Float32Array, depth: number): DenseHit[] {
  const best = new Float32Array(units.docIds.length).fill(-Infinity);
  const { vectors, dimension, owner } = units;
  for (let row = 0; row < owner.length; row++) {
    let dot = 0;
    const base = row * dimension;
    for (let k = 0; k < dimension; k++) dot += vectors[base + k] * query[k];
    if (dot > best[owner[row]]) best[owner[row]] = dot;
  }
  const order = Array.from(best.keys()).sort((a, b) => best[b] - best[a]);
  return order.slice(0, depth).map((d) => ({ docId: units.docIds[d], score: best[d] }));
}

/** A ranking per query, with the query's own id dropped as BEIR does. */
export async function denseRuns(
  embedder: Embedder,
  units: EmbeddedUnits,
  queries: readonly BeirQuery[],
  depth = 1000,
): Promise<Map<string, DenseHit[]>> {
  const vectors = await embedder.embed(
    queries.map((q) => q.text),
    "query",
  );
  const runs = new Map<string, DenseHit[]>();
  queries.forEach((q, i) => {
    const hits = rankDocuments(units, vectors[i], depth + 1);
    const kept = new Set(documentRanking(q.id, hits.map((h) => h.docId)));
    runs.set(q.id, hits.filter((h) => kept.has(h.docId)).slice(0, depth));
  });
  return runs;
}
