// A client-side prototype of coverage-gated hybrid fusion, to measure before proposing a change to
// services/index. RRF trusts both lists equally; when the embedder does not understand the query
// (an English word-piece vocabulary reading Chinese maps most characters to [UNK]), the vector list
// is noise and, fused at equal weight, reorders BM25's near-ties at random. The gate weights the
// vector list by how much of the query the embedder actually reads: the share of the query's word
// pieces that are not [UNK]. English queries keep weight ≈ 1 (plain RRF); a query the model cannot
// read drops its vector list. Both lists are fetched through the public Search RPC, so this
// measures exactly what the engine would fuse.
import { DEFAULT_MODEL } from "../lib/models/model-catalog.ts";
import { join } from "node:path";
import type { QuarryClient } from "../client/gateway-client.ts";
import { modelsDir, optional, type Env } from "../lib/config.ts";
import { KnownTokenShare } from "../services/embedder/index.ts";
import { DEFAULT_RRF_K, fuseReciprocalRank } from "../services/index/lab.ts";
import type { BeirQuery } from "./beir-dataset.ts";
import { documentRanking } from "./metrics.ts";
import { beirIdOfHit, HITS_PER_QUERY, MODE_TO_PROTO, type ModeRun } from "./run-eval.ts";

/** The embedder's own measure of how much of a query it reads (the production gate uses it too). */
function queryCoverage(env: Env): KnownTokenShare {
  return KnownTokenShare.fromModelDir(join(modelsDir(env), optional(env, "QUARRY_EMBEDDING_MODEL") ?? DEFAULT_MODEL));
}

/** Candidates per list, as the engine takes them for hybrid: max(topK × 4, 50). */
const CANDIDATES = Math.max(HITS_PER_QUERY * 4, 50);

export type GateRule = "rrf" | "linear" | "threshold";

/** The vector list's weight for a query of the given coverage under each rule. */
export function vectorWeight(rule: GateRule, coverage: number): number {
  if (rule === "rrf") return 1;
  if (rule === "linear") return coverage;
  // Half the query unreadable: the embedding says more about [UNK] than about the query.
  return coverage >= 0.5 ? 1 : 0;
}

/**
 * Runs each query's BM25 and vector lists once and fuses them under each rule. Latency is the two
 * RPCs back to back (an in-engine fusion would take about the hybrid mode's time).
 */
export async function runGatedFusion(
  client: QuarryClient,
  knowledgeBase: string,
  queries: readonly BeirQuery[],
  beirIdOf: ReadonlyMap<string, string>,
  env: Env,
  rules: readonly GateRule[] = ["rrf", "linear", "threshold"],
  onProgress?: (done: number, total: number) => void,
): Promise<{ runs: ModeRun[]; meanCoverage: number }> {
  const coverage = queryCoverage(env);
  const out = rules.map((rule): ModeRun => ({ mode: `hybrid-client-${rule}`, runs: new Map(), latenciesMs: [] }));
  let coverageSum = 0;
  for (const [i, query] of queries.entries()) {
    const started = performance.now();
    const ask = (mode: "bm25" | "vector") =>
      client.search({ query: query.text, knowledgeBases: [knowledgeBase], settings: { mode: MODE_TO_PROTO[mode], topK: CANDIDATES, minScore: 0 } });
    const bm25 = await ask("bm25");
    const vector = await ask("vector");
    const elapsed = performance.now() - started;
    const share = coverage.of(query.text);
    coverageSum += share;
    const docOf = new Map([...bm25.hits, ...vector.hits].map((h) => [h.chunk!.id, beirIdOfHit(h, beirIdOf)]));
    rules.forEach((rule, r) => {
      const fused = fuseReciprocalRank(
        [
          { name: "bm25", hits: bm25.hits.map((h) => ({ id: h.chunk!.id, score: h.score })) },
          { name: "vector", hits: vector.hits.map((h) => ({ id: h.chunk!.id, score: h.score })), weight: vectorWeight(rule, share) },
        ],
        DEFAULT_RRF_K,
      ).filter((e) => e.fusedScore > 0);
      const ids = fused.slice(0, HITS_PER_QUERY).map((e) => docOf.get(e.id)!);
      out[r].runs.set(query.id, documentRanking(query.id, ids));
      out[r].latenciesMs.push(elapsed);
    });
    onProgress?.(i + 1, queries.length);
  }
  return { runs: out, meanCoverage: queries.length ? coverageSum / queries.length : 0 };
}
