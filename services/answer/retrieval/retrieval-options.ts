import type { SearchHit } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import type { ChatModel } from "../chat-models/chat-model.ts";
import { correctionsFirst } from "./corrections-recall.ts";
import { expandNeighbours, MAX_NEIGHBOUR_CHUNKS, type NeighbourDeps } from "./neighbour-expansion.ts";
import { parentKey } from "../answering/parent-context.ts";
import { expandQuery, type PlannedQuery, type QueryExpansionMode } from "./query-expansion.ts";
import { fuseQueryLists } from "./query-fusion.ts";
import { RERANK_CANDIDATE_FACTOR, rerankHits, type Reranker } from "./rerank/reranker.ts";
import { retrieveWithFallback } from "./retrieval-fallback.ts";
import { validateQuestion, type RetrievalDeps, type RetrievalSettings } from "./retrieval-stage.ts";
import type { RetrievalExtras, RetrievalNotes } from "./retrieval-extras.ts";
import type { StageName } from "../answering/turn-record.ts";

export type { RetrievalExtras, RetrievalNotes };

export interface OptionDeps extends RetrievalDeps, Partial<NeighbourDeps> {
  chatModel?: ChatModel;
  /** Absent when no reranker is configured. */
  reranker?: Reranker;
  signal?: AbortSignal;
  /** Hits kept before all others whatever a fusion or a reranker scores them (matching corrections). */
  keepFirst?: (hit: SearchHit) => boolean;
  /** Shown the pooled candidates before rerank and the top-k cut (the retrieval debugger follows a chunk through them). */
  onCandidates?: (hits: readonly SearchHit[]) => void;
}

export interface OptionedRetrieval {
  hits: SearchHit[];
  notes: RetrievalNotes;
  knownTokenShare?: number;
  vectorWeight?: number;
}

/** Called when a stage ends: its name, when it started (performance.now()) and a one-line outcome. */
export type StageListener = (stage: StageName, startedAt: number, note: string) => void;

const EXPANSION_STAGE: Record<QueryExpansionMode, StageName> = { rewrite: "rewrite", hyde: "hyde", multi_query: "multi-query" };

/**
 * Retrieval with its options, in order: expand the question (rewrite, HyDE or multi-query, through
 * the chat model), search each planned query (falling back to keyword search when the vector path
 * is down, topping up short lists), fuse the variants' lists, rerank a widened candidate set, then
 * merge neighbouring chunks within the token budget. Options that need something not configured
 * (a chat model, a reranker, chunk look-up) refuse with FailedPrecondition instead of being skipped.
 */
export async function retrieveWithOptions(
  question: string,
  deps: OptionDeps,
  settings: RetrievalSettings,
  options: RetrievalExtras,
  tokenBudget: number,
  onStage: StageListener = () => {},
): Promise<OptionedRetrieval> {
  const text = validateQuestion(question, settings);
  const reranker = options.rerank ? deps.reranker : undefined;
  if (options.rerank && !reranker) {
    throw new FailedPreconditionError("rerank was asked for, but no reranker is configured: set QUARRY_RERANK_URL (a TEI or /v1/rerank server) or a chat model");
  }
  const neighbours = options.neighbourChunks ?? 0;
  if (neighbours > MAX_NEIGHBOUR_CHUNKS) throw new InvalidInputError(`neighbour_chunks is at most ${MAX_NEIGHBOUR_CHUNKS}, got ${neighbours}`);
  const notes: RetrievalNotes = { queries: [], fallbackHits: 0, reranked: 0, mergedNeighbours: 0 };

  let planned: PlannedQuery[] = [{ text, embedText: text }];
  if (options.queryExpansion && options.queryExpansion !== "none") {
    const mode = options.queryExpansion;
    const at = performance.now();
    const expanded = await expandQuery(text, mode, deps.chatModel, { variants: options.queryVariants, signal: deps.signal });
    planned = expanded.queries;
    notes.queries = mode === "hyde" ? [text] : planned.map((q) => q.text);
    const what = mode === "multi_query" ? `${planned.length} queries` : mode === "hyde" ? "hypothetical passage written" : "question rewritten";
    onStage(EXPANSION_STAGE[mode], at, expanded.fallbackReason ? `${expanded.fallbackReason}; searched the question as asked` : what);
  }

  const want = reranker ? settings.topK * RERANK_CANDIDATE_FACTOR : settings.topK;
  const at = performance.now();
  const runs = await Promise.all(
    planned.map((q) =>
      retrieveWithFallback(q.text, q.embedText === q.text ? deps : { ...deps, embed: (_, model) => deps.embed(q.embedText, model) }, { ...settings, topK: want }, options.bm25Fill),
    ),
  );
  let hits = correctionsFirst(runs.length === 1 ? runs[0].hits : fuseQueryLists(runs.map((r) => r.hits), want), deps.keepFirst);
  deps.onCandidates?.(hits);
  notes.degraded = runs.find((r) => r.degraded)?.degraded;
  notes.fallbackHits = hits.filter((h) => h.explain.fallback).length;
  const filled = runs.reduce((n, r) => n + r.filled, 0);
  onStage(
    "retrieve",
    at,
    [
      `${hits.length} hits${runs.length > 1 ? ` fused from ${runs.length} queries` : ""}${reranker ? ` (${want} candidates for rerank)` : ""}`,
      ...(runs[0].knownTokenShare === undefined ? [] : [`the embedder reads ${Math.round(runs[0].knownTokenShare * 100)}% of the question`]),
      ...(notes.degraded ? [`degraded: ${notes.degraded}`] : []),
      ...(filled ? [`${filled} keyword hits filled top-k`] : []),
    ].join("; "),
  );

  if (reranker) {
    const started = performance.now();
    // The reranker judges against what was searched for: the rewrite when there is one.
    const query = options.queryExpansion === "rewrite" ? planned[0].text : text;
    // Matching corrections were ranked first on purpose: the reranker orders (and cuts) the rest.
    const kept = deps.keepFirst ? hits.filter(deps.keepFirst) : [];
    const outcome = await rerankHits(query, kept.length > 0 ? hits.slice(kept.length) : hits, reranker, Math.max(0, settings.topK - kept.length), deps.signal);
    hits = [...kept, ...outcome.hits];
    notes.reranker = reranker.name;
    notes.reranked = outcome.reranked;
    notes.rerankSkipped = outcome.skipped;
    onStage("rerank", started, outcome.skipped ? `skipped, fused order kept: ${outcome.skipped}` : `${outcome.reranked} candidates scored by ${reranker.name}`);
  } else {
    hits = hits.slice(0, settings.topK);
  }

  if (neighbours > 0) {
    if (!deps.chunksAt || !deps.countTokens) throw new FailedPreconditionError("neighbour expansion needs chunk look-up, which this retrieval was not given");
    const started = performance.now();
    // A hit with a parent is read with its whole parent (answer-pipeline.ts): parents supersede
    // neighbours. A matching correction (kept first) is already whole (whole-corrections.ts).
    const withParent = hits.filter((h) => parentKey(h.chunk) !== undefined).length;
    const expanded = await expandNeighbours(hits, neighbours, tokenBudget, { chunksAt: deps.chunksAt, countTokens: deps.countTokens }, (h) => parentKey(h.chunk) === undefined && !deps.keepFirst?.(h));
    hits = expanded.hits;
    notes.mergedNeighbours = expanded.merged;
    onStage("neighbours", started, `${expanded.merged} adjacent chunks merged${withParent ? `; ${withParent} hits left to their parents` : ""}`);
  }
  notes.fallbackHits = hits.filter((h) => h.explain.fallback).length;
  return { hits, notes, knownTokenShare: runs[0].knownTokenShare, vectorWeight: runs[0].vectorWeight };
}
