// Where an expected chunk was lost, and the one line a person reads: from the facts the tracer
// gathered (debug/chunk-trace.ts), nothing looked up here. The stages are judged from the last
// one it reached backwards: the context, what retrieval kept, the pooled candidates (rerank, the
// top-k cut), the searches' own hits (fusion of query variants), then each search's ranking
// (min score, fusion of the BM25 and vector lists, top-k, the lists' depth).

export type RetrievalLossKind =
  | "none"
  | "not-in-knowledge-base"
  | "not-searchable"
  | "not-retrieved"
  | "fusion"
  | "min-score"
  | "top-k"
  | "rerank"
  | "context-budget"
  | "duplicate";

export type ListName = "bm25" | "vector" | "fused";

/** How a list position was found. */
export type RankSource = "candidates" | "deep-search" | "direct-score" | "absent";

/** Where the chunk stood in one list of one search. */
export interface ListPosition {
  list: ListName;
  knowledgeBaseId: string;
  query: string;
  /** Candidates the retrieval took from this list (for "fused": the search's top-k). */
  window: number;
  /** 1-based; 0 when beyond the deep window or absent. */
  rank: number;
  score?: number;
  inWindow: boolean;
  source: RankSource;
  windowLastScore?: number;
  /** For a direct score: the depth the deep search went to without finding it. */
  beyond?: number;
  note: string;
}

/** One search's verdict material: its positions and the chunk's place in its ranking at the search's own settings. */
export interface SearchTrace {
  mode: "bm25" | "vector" | "hybrid";
  topK: number;
  minScore: number;
  /** Whether the retrieval asked for 3 × top-k candidates to rerank. */
  widenedForRerank: boolean;
  positions: ListPosition[];
  /** Its rank and score in the search's ranking before min score and top-k (0: not ranked: in no list's window, or beyond the deep window). */
  rankAtSettings: number;
  scoreAtSettings?: number;
}

export interface TraceFacts {
  /** Why no search can return it (disabled, not ready, outside a filter); empty when one can. */
  unsearchable: string;
  searches: SearchTrace[];
  /** Whether it was among a search's own hits. */
  inSearchHits: boolean;
  /** Its rank in the pooled candidates before rerank and the top-k cut; 0 when not there. */
  candidateRank: number;
  candidateCount: number;
  /** The reranker ordered the candidates (asked, and did not fail). */
  reranked: boolean;
  /** Its rank among the hits retrieval kept; 0 when not there. */
  retrievedRank: number;
  topK: number;
  contextNumber: number;
  exclusion?: { reason: "duplicate" | "over-budget"; duplicateOf?: number };
  contextTokenBudget: number;
}

export interface Verdict {
  loss: RetrievalLossKind;
  verdict: string;
}

export function judge(facts: TraceFacts): Verdict {
  if (facts.unsearchable) return { loss: "not-searchable", verdict: `not searchable: ${facts.unsearchable}` };
  if (facts.contextNumber > 0) {
    return { loss: "none", verdict: `in the context as [${facts.contextNumber}] (rank ${facts.retrievedRank} of the ${facts.topK} retrieved)` };
  }
  if (facts.retrievedRank > 0) {
    if (facts.exclusion?.reason === "duplicate") {
      return { loss: "duplicate", verdict: `retrieved (rank ${facts.retrievedRank}) but left out of the context as a repeat of [${facts.exclusion.duplicateOf ?? "?"}]` };
    }
    return {
      loss: "context-budget",
      verdict: `retrieved (rank ${facts.retrievedRank}) but left out of the context: its ${facts.contextTokenBudget.toLocaleString("en-US")}-token budget was spent`,
    };
  }
  if (facts.candidateRank > 0) {
    if (facts.reranked) {
      return {
        loss: "rerank",
        verdict: `dropped by rerank: ${ordinal(facts.candidateRank)} of the ${facts.candidateCount} candidates before rerank, not in the ${facts.topK} the reranker kept`,
      };
    }
    return { loss: "top-k", verdict: `not retrieved: ranked ${ordinal(facts.candidateRank)} of the candidates, top-k is ${facts.topK}` };
  }
  if (facts.inSearchHits) {
    return { loss: "fusion", verdict: `dropped by fusion: in a search's hits, but not among the ${facts.candidateCount} kept after fusing the query variants` };
  }
  const ranked = facts.searches.filter((s) => s.rankAtSettings > 0).sort((a, b) => a.rankAtSettings - b.rankAtSettings);
  const best = ranked[0];
  if (best) {
    const topK = best.widenedForRerank ? `${best.topK} candidates are fetched for rerank` : `top-k is ${best.topK}`;
    if (best.minScore > 0 && best.scoreAtSettings !== undefined && best.scoreAtSettings < best.minScore && best.rankAtSettings <= best.topK) {
      return { loss: "min-score", verdict: `dropped by min score: ranked ${ordinal(best.rankAtSettings)}, but its score ${fmt(best.scoreAtSettings)} is under ${fmt(best.minScore)}` };
    }
    if (best.mode === "hybrid") {
      const raw = best.positions.filter((p) => p.list !== "fused" && p.inWindow && p.rank > 0).sort((a, b) => a.rank - b.rank)[0];
      if (raw && raw.rank <= best.topK) {
        return { loss: "fusion", verdict: `dropped by fusion: ${ordinal(raw.rank)} in ${raw.list}, but ${ordinal(best.rankAtSettings)} after fusion; ${topK}` };
      }
      return { loss: "top-k", verdict: `not retrieved: ranked ${ordinal(best.rankAtSettings)} after fusion, ${topK}` };
    }
    return { loss: "top-k", verdict: `not retrieved: ranked ${ordinal(best.rankAtSettings)} in ${best.mode}, ${topK}` };
  }
  // In no list's window at all: say how far below each list's depth it was.
  const lists = facts.searches.flatMap((s) => s.positions.filter((p) => p.list !== "fused"));
  const said = [...new Set(lists.map(describeMiss))];
  return { loss: "not-retrieved", verdict: `not retrieved: ${said.length > 0 ? said.join("; ") : "no search covered its knowledge base"}` };
}

/** "rank 37 in bm25, below the 32 fetched" and the like, for one list. */
export function describeMiss(p: ListPosition): string {
  switch (p.source) {
    case "candidates":
    case "deep-search":
      return p.inWindow ? `rank ${p.rank} in ${p.list}, within the ${p.window} fetched` : `rank ${p.rank} in ${p.list}, below the ${p.window} fetched`;
    case "direct-score":
      return `beyond rank ${p.beyond ?? "?"} in ${p.list} (its score ${fmt(p.score ?? 0)}${p.windowLastScore === undefined ? "" : `; the ${ordinal(p.window)} fetched scores ${fmt(p.windowLastScore)}`})`;
    case "absent":
      return p.list === "bm25" ? "not in bm25 at all (no word of the query is in it)" : `not in ${p.list} at all`;
  }
}

export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th";
  return `${n}${suffix}`;
}

function fmt(score: number): string {
  return Math.abs(score) >= 10 ? score.toFixed(1) : score.toPrecision(3);
}

/** Losses from the furthest a chunk got to the least far, to pick the chunk a report leads with. */
export const LOSS_ORDER: RetrievalLossKind[] = [
  "none",
  "duplicate",
  "context-budget",
  "rerank",
  "top-k",
  "min-score",
  "fusion",
  "not-retrieved",
  "not-searchable",
  "not-in-knowledge-base",
];
