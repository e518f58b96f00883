// The one search ladder every SearchEngine runs: validate the query, check its vector against the
// dimensions the engine stores, fetch the lists the mode needs (BM25, kNN over chunk vectors, kNN
// over document vectors, each as deep as the mode asks), fuse them by reciprocal rank
// (rrf-fusion.ts) so every hit explains its rank and score in each list, drop hits under minScore
// and keep the top k. An engine supplies only how it reads its stored dimensions and fetches its
// lists, so thresholds, depths and explanations cannot drift apart between backends.
//
// Two levels of vectors, one vote: each kind of evidence votes once. Where a base keeps document
// vectors (documents embedded whole), the chunk and document lists first become one vector list,
// ranked by the better cosine of a chunk and its document (document-level.ts). Vector mode is that
// list; hybrid fuses BM25 with it — two lists, as for a base without document vectors, which gets
// an empty document list and so exactly what it had.
import type { SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { DEFAULT_RRF_K, fuseHits, type EngineHit } from "./rrf-fusion.ts";
import { inSpan, inSpanSync } from "../../../lib/tracing/spans.ts";
import { combineVectorLevels } from "./document-level.ts";
import { applyMinScore, hybridCandidates, requireQueryVector, validateSearchQuery } from "./search-query.ts";

/** One searched knowledge base's stored vector dimension. */
export interface StoredDimension {
  knowledgeBaseId: string;
  dimension: number;
}

/** Which lists a search needs and how many hits of each; a list the mode does not use is absent. */
export interface ListRequest {
  bm25?: { limit: number };
  /** The query vector, already checked against every searched knowledge base's dimension. */
  vector?: { vector: Float32Array; limit: number };
  /** The same vector against the document vectors: one hit per document, on the chunk it is stored with. */
  documentVector?: { vector: Float32Array; limit: number };
}

/** The lists fetched for a ListRequest, best first; an absent list counts as empty. */
export interface FetchedLists {
  bm25?: EngineHit[];
  vector?: EngineHit[];
  documentVector?: EngineHit[];
}

/** A hybrid search's request with both lists present. */
export type HybridListRequest = Required<ListRequest>;

export interface SearchLists {
  /** The stored dimension of each knowledge base asked for; NotFoundError for one without storage. */
  dimensions(knowledgeBaseIds: string[]): StoredDimension[] | Promise<StoredDimension[]>;
  /**
   * Fetches the lists the request names, filtered by the query's knowledge bases, documents and the
   * enabled flag. The engine fetches them together (one snapshot, one round trip) when it can.
   */
  lists(request: ListRequest): FetchedLists | Promise<FetchedLists>;
  /**
   * An engine that can run hybrid search as a query of its own (fused on the server) returns its
   * fused, explained hits here, before min-score and top-k; undefined fuses the fetched lists.
   */
  fuseNatively?(request: HybridListRequest): Promise<SearchHit[]> | undefined;
}

/**
 * The engine's lists, in one span named for what it fetches ("bm25 list", "knn list", "bm25 + knn
 * lists"): engines fetch them together (one snapshot, one round trip), so they share one span.
 */
function fetchLists(source: SearchLists, request: ListRequest): Promise<FetchedLists> {
  const names = [request.bm25 && "bm25", (request.vector || request.documentVector) && "knn"].filter(Boolean);
  return inSpan(names.length > 1 ? `${names.join(" + ")} lists` : `${names[0]} list`, {}, async (span) => {
    const lists = await source.lists(request);
    span?.setAttributes({ "quarry.bm25_hits": lists.bm25?.length ?? 0, "quarry.knn_hits": (lists.vector?.length ?? 0) + (lists.documentVector?.length ?? 0) });
    return lists;
  });
}

const fuse = (...args: Parameters<typeof fuseHits>) => inSpanSync("fusion", { "quarry.lists": args[0].length }, () => fuseHits(...args));

export async function hybridSearch(query: SearchQuery, source: SearchLists): Promise<SearchHit[]> {
  validateSearchQuery(query);
  const stored = await source.dimensions(query.knowledgeBaseIds);
  const k = query.rrfK ?? DEFAULT_RRF_K;
  if (query.mode === "bm25") {
    const { bm25 = [] } = await fetchLists(source, { bm25: { limit: query.topK } });
    return applyMinScore(fuse([{ name: "bm25", hits: bm25 }], { k, scoreFrom: "bm25" }), query.minScore);
  }
  const vector = requireQueryVector(query, stored);
  if (query.mode === "vector") {
    const lists = await fetchLists(source, { vector: { vector, limit: query.topK }, documentVector: { vector, limit: query.topK } });
    const dense = combineVectorLevels(lists.vector ?? [], lists.documentVector ?? [], k, query.topK);
    const fused = fuse([{ name: "vector", hits: dense.hits }, { name: "document", hits: dense.documents, votes: false }], { k, scoreFrom: "vector" });
    return applyMinScore(fused, query.minScore);
  }
  const candidates = hybridCandidates(query);
  const request: HybridListRequest = { bm25: { limit: candidates }, vector: { vector, limit: candidates }, documentVector: { vector, limit: candidates } };
  const native = source.fuseNatively?.(request);
  if (native) return applyMinScore(await inSpan("bm25 + knn lists, fused in the engine", {}, () => native), query.minScore).slice(0, query.topK);
  const lists = await fetchLists(source, request);
  const dense = combineVectorLevels(lists.vector ?? [], lists.documentVector ?? [], k, candidates);
  const fused = fuse(
    [
      { name: "bm25", hits: lists.bm25 ?? [], weight: query.weights?.bm25 },
      // The gate's weight (services/answer) covers both levels: a model that cannot read the
      // question is as blind to whole documents as to chunks.
      { name: "vector", hits: dense.hits, weight: query.weights?.vector },
      { name: "document", hits: dense.documents, votes: false },
    ],
    { k, ...(query.fusion?.method === "convex" ? { convex: { alpha: query.fusion.alpha } } : {}) },
  );
  return applyMinScore(fused, query.minScore).slice(0, query.topK);
}

