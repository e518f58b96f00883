// What retrieval can be asked to do beyond one search, and what it reports back: the types the
// turn record keeps and retrieval-options.ts runs.
import type { QueryExpansionChoice } from "./query-expansion.ts";

/** What a caller can ask retrieval to do beyond one search: rerank, expansion, neighbours, fill. */
export interface RetrievalExtras {
  rerank?: boolean;
  /** Absent: the assistant's default; "none": the question as asked. */
  queryExpansion?: QueryExpansionChoice;
  /** Variants for multi_query; 0 or absent means 3. */
  queryVariants?: number;
  /** Adjacent chunks to merge on each side of a hit; 0 or absent leaves hits alone. */
  neighbourChunks?: number;
  /** Top up a short vector or hybrid list with keyword hits. */
  bm25Fill?: boolean;
}

/** What retrieval did beyond the plain search, and what it could not do; shown with the results and kept in the turn. */
export interface RetrievalNotes {
  degraded?: string;
  rerankSkipped?: string;
  /** The searches run, when the question was rewritten or expanded. */
  queries: string[];
  fallbackHits: number;
  reranked: number;
  reranker?: string;
  mergedNeighbours: number;
}
