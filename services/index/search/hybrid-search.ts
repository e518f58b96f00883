// The one search ladder every SearchEngine runs: validate the query, check its vector against the
// dimensions the engine stores, fetch the lists the mode needs (BM25, kNN over chunk vectors, kNN
// over document vectors, each as deep as the mode asks), fuse them by reciprocal rank
// (rrf-fusion.ts) so every hit explains its rank and score in each list, drop hits under minScore
// and keep the top k. An engine supplies only how it reads its stored dimensions and fetches its
// lists, so thresholds, depths and explanations cannot drift apart between backends.
//
// Two levels of vectors, one principle: every list is one vote by rank. The document-vector list
// (documents embedded whole, where the base keeps them) is a list like the others, its entries
// placed on their documents' best chunks (document-level.ts), and hybrid fuses BM25, chunk vectors
// and document vectors. Vector mode stays one similarity: a hit scores and ranks by the better
// cosine of its chunk and its whole document (both in the same model's space), so its order is its
// scores' and min-score means what it meant. Bases without document vectors return an empty
// document list, and both modes are then what they were.
import type { SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { DEFAULT_RRF_K, fuseHits, type EngineHit } from "./rrf-fusion.ts";
import { placeDocumentHits } from "./document-level.ts";
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

export async function hybridSearch(query: SearchQuery, source: SearchLists): Promise<SearchHit[]> {
  validateSearchQuery(query);
  const stored = await source.dimensions(query.knowledgeBaseIds);
  const k = query.rrfK ?? DEFAULT_RRF_K;
  if (query.mode === "bm25") {
    const { bm25 = [] } = await source.lists({ bm25: { limit: query.topK } });
    return applyMinScore(fuseHits([{ name: "bm25", hits: bm25 }], { k, scoreFrom: "bm25" }), query.minScore);
  }
  const vector = requireQueryVector(query, stored);
  if (query.mode === "vector") {
    const lists = await source.lists({ vector: { vector, limit: query.topK }, documentVector: { vector, limit: query.topK } });
    const chunks = { name: "vector" as const, hits: lists.vector ?? [] };
    const documents = { name: "document" as const, hits: placeDocumentHits(lists.documentVector ?? [], [chunks], k) };
    if (documents.hits.length === 0) return applyMinScore(fuseHits([chunks], { k, scoreFrom: "vector" }), query.minScore);
    // Sorted by similarity; the sort is stable, so equal cosines keep fusion's order.
    const fused = fuseHits([chunks, documents], { k, scoreFrom: "similarity" }).sort((a, b) => b.score - a.score);
    return applyMinScore(fused, query.minScore).slice(0, query.topK);
  }
  const candidates = hybridCandidates(query);
  const request: HybridListRequest = { bm25: { limit: candidates }, vector: { vector, limit: candidates }, documentVector: { vector, limit: candidates } };
  const native = source.fuseNatively?.(request);
  if (native) return applyMinScore(await native, query.minScore).slice(0, query.topK);
  const lists = await source.lists(request);
  const chunkLists = [
    { name: "bm25" as const, hits: lists.bm25 ?? [], weight: query.weights?.bm25 },
    { name: "vector" as const, hits: lists.vector ?? [], weight: query.weights?.vector },
  ];
  // The question's vector counts as much in either level: a model that cannot read it (the weight
  // of the gate, services/answer) is as blind to whole documents as to chunks.
  const documents = { name: "document" as const, hits: placeDocumentHits(lists.documentVector ?? [], chunkLists, k), weight: query.weights?.vector };
  const fused = fuseHits([...chunkLists, documents], { k });
  return applyMinScore(fused, query.minScore).slice(0, query.topK);
}
