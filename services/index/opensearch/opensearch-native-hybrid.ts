// OpenSearch's own hybrid search (the neural-search plugin): one `hybrid` query whose sub-queries are
// the BM25 match and the kNN search, fused on the server by a search pipeline. What 2.19.1 does, as
// measured against a live node (see docs/engines.md):
// - `score-ranker-processor` (RRF) takes only `rank_constant`; per-list weights are rejected ("supported
//   parameters are [rank_constant]"), and it ranks each shard's lists on their own, so it equals the
//   global RRF of rrf-fusion.ts only when the search touches one shard. The engine routes other RRF
//   searches to its _msearch path.
// - `normalization-processor` (min_max + arithmetic_mean) normalizes over all shards' lists; its
//   weights must sum to 1 and live in the pipeline, so there is one pipeline per weight pair.
// - The `hybrid` query has no `filter` field in 2.19, so each sub-query carries the filters itself.
// - Without a pipeline a hybrid query returns its internal delimiter scores, so every request names one.
//
// Explanations come from named sub-queries (`_name` + include_named_queries_score): each hit then
// carries the raw score of every list it is in, keyed by list name. The hybrid explain (a
// `hybrid_score_explanation` response processor + explain=true) was tried: it gives each present
// list's normalized and raw score, but leaves out the lists a hit is absent from without saying which
// sub-query a remaining entry belongs to, and it builds a full Lucene explanation tree per hit, which
// the docs call expensive. Ranks follow from the raw scores, because the request asks for the whole
// union of both lists (size = 2 × depth per shard), so every member of each list is in the response.
import type { Client } from "@opensearch-project/opensearch";
import type { HitExplain } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import type { HybridFusion, NativeHybridSetting } from "../config.ts";
import { fuseReciprocalRank, type RankedList } from "../search/rrf-fusion.ts";

export const NEURAL_SEARCH_PLUGIN = "opensearch-neural-search";
/** Names of the hybrid sub-queries; they key each hit's matched_queries. */
export const BM25_QUERY_NAME = "bm25";
export const VECTOR_QUERY_NAME = "vector";

/** True when every node of the cluster has the neural-search plugin (a hybrid query may run on any of them). */
export async function detectNeuralSearch(client: Client): Promise<boolean> {
  const { body } = await client.nodes.info({ metric: ["plugins"], filter_path: "nodes.*.plugins.name" });
  const nodes = Object.values((body as { nodes?: Record<string, { plugins?: { name: string }[] }> }).nodes ?? {});
  return nodes.length > 0 && nodes.every((node) => (node.plugins ?? []).some((plugin) => plugin.name === NEURAL_SEARCH_PLUGIN));
}

/**
 * Whether hybrid search runs natively: "off" never, "auto" when the plugin is there, "on" only with
 * the plugin (FailedPrecondition without it). Normalized fusion exists only natively, so it needs the
 * plugin too. detect is called at most once, and not at all for "off" with RRF.
 */
export async function resolveNativeHybrid(setting: NativeHybridSetting, fusion: HybridFusion, detect: () => Promise<boolean>): Promise<boolean> {
  if (setting === "off") {
    if (fusion === "normalized") {
      throw new FailedPreconditionError("QUARRY_OPENSEARCH_FUSION=normalized needs the native hybrid query, but QUARRY_OPENSEARCH_NATIVE_HYBRID=off");
    }
    return false;
  }
  const installed = await detect();
  if (installed) return true;
  if (setting === "on") {
    throw new FailedPreconditionError(
      `QUARRY_OPENSEARCH_NATIVE_HYBRID=on, but not every OpenSearch node has the ${NEURAL_SEARCH_PLUGIN} plugin; install it or set the variable to auto or off`,
    );
  }
  if (fusion === "normalized") {
    throw new FailedPreconditionError(`QUARRY_OPENSEARCH_FUSION=normalized needs the ${NEURAL_SEARCH_PLUGIN} plugin, which this OpenSearch lacks`);
  }
  return false;
}

/** 2.19 accepts rank constants from 1 up; the docs of later versions cap them at 10 000. */
export function isNativeRankConstant(k: number): boolean {
  return Number.isInteger(k) && k >= 1 && k <= 10_000;
}

/** Creates Quarry's search pipelines (idempotent PUTs) once per process, each on first need. */
export class SearchPipelines {
  private readonly ready = new Map<string, Promise<string>>();

  constructor(
    private readonly client: Client,
    private readonly prefix: string,
  ) {}

  /** The RRF pipeline for one rank constant, e.g. quarry-rrf-60. */
  rrf(rankConstant: number): Promise<string> {
    if (!isNativeRankConstant(rankConstant)) throw new InvalidInputError(`a native RRF rank constant must be a whole number from 1 to 10000, got ${rankConstant}`);
    return this.ensure(`${this.prefix}rrf-${rankConstant}`, {
      description: `Quarry hybrid search: reciprocal rank fusion, k = ${rankConstant}`,
      phase_results_processors: [{ "score-ranker-processor": { combination: { technique: "rrf", rank_constant: rankConstant } } }],
    });
  }

  /** The min-max normalization pipeline for one weight pair (scaled to sum to 1, as 2.19 requires), e.g. quarry-minmax-3000-7000. */
  normalized(weights: { bm25: number; vector: number }): Promise<string> {
    const [bm25, vector] = normalizedWeights(weights);
    return this.ensure(`${this.prefix}minmax-${Math.round(bm25 * 10_000)}-${Math.round(vector * 10_000)}`, {
      description: `Quarry hybrid search: min-max normalization, weighted mean [bm25 ${bm25}, vector ${vector}]`,
      phase_results_processors: [
        {
          "normalization-processor": {
            normalization: { technique: "min_max" },
            combination: { technique: "arithmetic_mean", parameters: { weights: [bm25, vector] } },
          },
        },
      ],
    });
  }

  private ensure(name: string, body: Record<string, unknown>): Promise<string> {
    let ready = this.ready.get(name);
    if (!ready) {
      ready = this.client.searchPipeline.put({ id: name, body: body as never }).then(
        () => name,
        (error: unknown) => {
          // Not cached: the next search tries again (OpenSearch may have been down for a moment).
          this.ready.delete(name);
          throw error;
        },
      );
      this.ready.set(name, ready);
    }
    return ready;
  }
}

/** [bm25, vector] scaled to sum to 1, rounded to 4 places so equal settings share one pipeline. */
export function normalizedWeights(weights: { bm25: number; vector: number }): [number, number] {
  const { bm25, vector } = weights;
  if (!(Number.isFinite(bm25) && Number.isFinite(vector) && bm25 >= 0 && vector >= 0 && bm25 + vector > 0)) {
    throw new InvalidInputError(`fusion weights must be >= 0 and not both 0, got bm25 ${bm25}, vector ${vector}`);
  }
  const first = Math.round((bm25 / (bm25 + vector)) * 10_000) / 10_000;
  return [first, Math.round((1 - first) * 10_000) / 10_000];
}

/** A hit of a native hybrid search as the server returned it, in the server's order. */
export interface NativeHit {
  id: string;
  /** The concrete index the hit came from; each index has one shard, which is the unit the depth applies to. */
  index: string;
  /** The server's fused score. */
  score: number;
  /** Raw score in each list the hit matched (cosine for the vector list); absent when it did not. */
  bm25?: number;
  vector?: number;
}

export interface ExplainNativeOptions {
  fusion: HybridFusion;
  /** Hits each sub-query collects per shard (pagination_depth, and the kNN k). */
  depth: number;
  rrfK: number;
  /** Equal for native RRF (2.19 has no RRF weights), so they scale every fused score alike. */
  weights: { bm25: number; vector: number };
}

/**
 * Each hit with its explanation, ranks counted over the lists as the server built them. For RRF the
 * fused score is recomputed from those ranks in double precision (the server's is a float32) by the
 * same code as the client-side path, and the server's order is kept except where it disagrees with
 * those scores (a tie inside one list, which the server breaks by Lucene doc id and Quarry by chunk
 * id); for normalized fusion the server's score and order stand.
 */
export function explainNativeHits(hits: NativeHit[], options: ExplainNativeOptions): { id: string; score: number; explain: HitExplain }[] {
  const lists: RankedList[] = [
    { name: "bm25", weight: options.weights.bm25, hits: rankedList(hits, (hit) => hit.bm25, options.depth) },
    { name: "vector", weight: options.weights.vector, hits: rankedList(hits, (hit) => hit.vector, options.depth) },
  ];
  const fused = new Map(fuseReciprocalRank(lists, options.rrfK).map((entry) => [entry.id, entry]));
  const explained = hits.map((hit) => {
    const entry = fused.get(hit.id);
    const fusedScore = options.fusion === "rrf" ? (entry?.fusedScore ?? 0) : hit.score;
    const explain: HitExplain = {
      bm25Rank: entry?.ranks.bm25 ?? 0,
      bm25Score: entry?.scores.bm25 ?? 0,
      vectorRank: entry?.ranks.vector ?? 0,
      vectorScore: entry?.scores.vector ?? 0,
      fusedScore,
    };
    return { id: hit.id, score: fusedScore, explain };
  });
  // Array.prototype.sort is stable: hits with equal scores keep the server's order.
  if (options.fusion === "rrf") explained.sort((a, b) => b.score - a.score);
  return explained;
}

// A hit can match a sub-query without being in its list: a BM25 match beyond the depth shows up when
// the kNN list brought it in. So each list is cut to the depth per index, like the server's collector,
// and then ranked over all indices (score descending, then id — the _msearch lists' sort).
function rankedList(hits: NativeHit[], scoreOf: (hit: NativeHit) => number | undefined, depth: number): { id: string; score: number }[] {
  const byIndex = new Map<string, { id: string; score: number }[]>();
  for (const hit of hits) {
    const score = scoreOf(hit);
    if (score === undefined) continue;
    const list = byIndex.get(hit.index) ?? [];
    list.push({ id: hit.id, score });
    byIndex.set(hit.index, list);
  }
  return [...byIndex.values()].flatMap((list) => list.sort(byScoreThenId).slice(0, depth)).sort(byScoreThenId);
}

function byScoreThenId(a: { id: string; score: number }, b: { id: string; score: number }): number {
  if (b.score !== a.score) return b.score - a.score;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
