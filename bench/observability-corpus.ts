// The store `quarry bench observability --corpus-chunks N` searches: bench query's synthetic corpus
// (real SciFact sentences and cMedIR titles recombined, clustered vectors; synthetic-corpus.ts)
// loaded once into an embedded store, which each process of the bench then starts on a copy of. The
// issue's overhead goal is stated on bench query's searches; a store of a handful of notes makes
// the fixed cost of a span a larger share of a search than any real base does, so both are run.
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBenchBackend } from "./bench-backend.ts";
import { generateSyntheticChunks, loadBenchQueries, loadIntoEngine, loadSentencePools } from "./synthetic-corpus.ts";

export interface SearchCorpus {
  chunks: number;
  /** A data folder holding the loaded store: copy it, never start on it. */
  dir: string;
  knowledgeBaseId: string;
  queries: string[];
  loadSeconds: number;
  /** Removes the folder. */
  remove(): Promise<void>;
}

export async function buildSearchCorpus(options: { chunks: number; queries: number; evalDir: string; seed: number }): Promise<SearchCorpus> {
  const pools = loadSentencePools(options.evalDir);
  const queries = loadBenchQueries(options.evalDir, options.queries, options.seed).map((q) => q.text);
  const dir = await mkdtemp(join(tmpdir(), "quarry-bench-obs-corpus-"));
  const backend = await startBenchBackend({ backend: "embedded" });
  let knowledgeBaseId = "";
  const started = performance.now();
  try {
    const kb = (await backend.client.createKnowledgeBase({ name: "bench-observability-corpus" })).knowledgeBase!;
    knowledgeBaseId = kb.id;
    await loadIntoEngine(backend.engine, generateSyntheticChunks(pools, { chunks: options.chunks, seed: options.seed, dimension: kb.embeddingDimension }), {
      knowledgeBaseId,
      chunksPerDocument: 100,
    });
  } catch (error) {
    await backend.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  await backend.close(dir);
  return { chunks: options.chunks, dir, knowledgeBaseId, queries, loadSeconds: (performance.now() - started) / 1000, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A process's data folder: a fresh copy of the corpus's store. */
export async function copyCorpus(corpus: SearchCorpus, dataDir: string): Promise<void> {
  await cp(corpus.dir, dataDir, { recursive: true });
}
