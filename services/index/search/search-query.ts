// Checks and defaults every SearchEngine applies the same way to a SearchQuery, whatever stores the
// chunks: which queries are malformed (InvalidInput), which do not fit the stored vectors
// (FailedPrecondition), how many candidates hybrid fuses, and what minScore drops.
import type { Chunk, EmbeddedChunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { ErrorReasons, FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import type { ChunkPosition } from "./search-engine.ts";

export function validateSearchQuery(query: SearchQuery): void {
  if (query.knowledgeBaseIds.length === 0) throw new InvalidInputError("a search needs at least one knowledge base");
  if (!Number.isInteger(query.topK) || query.topK <= 0) throw new InvalidInputError(`topK must be a positive integer, got ${query.topK}`);
  if (query.candidates !== undefined && (!Number.isInteger(query.candidates) || query.candidates <= 0)) {
    throw new InvalidInputError(`candidates must be a positive integer, got ${query.candidates}`);
  }
  if (!["bm25", "vector", "hybrid"].includes(query.mode)) throw new InvalidInputError(`unknown retrieval mode ${String(query.mode)}`);
}

/** The query vector, checked against the dimension each searched knowledge base stores. */
export function requireQueryVector(query: SearchQuery, stored: { knowledgeBaseId: string; dimension: number }[]): Float32Array {
  const vector = query.vector;
  if (!vector || vector.length === 0) throw new InvalidInputError(`${query.mode} search needs a query vector`);
  for (const { knowledgeBaseId, dimension } of stored) {
    if (vector.length !== dimension) {
      throw new FailedPreconditionError(`query vector has ${vector.length} dimensions; knowledge base ${knowledgeBaseId} stores ${dimension}`, {
        reason: ErrorReasons.staleQueryVector,
      });
    }
  }
  return vector;
}

/** How many hits each list contributes to hybrid fusion. */
export function hybridCandidates(query: SearchQuery): number {
  return query.candidates ?? Math.max(query.topK * 4, 50);
}

/** Drops hits below minScore in the mode's own score; 0 (or less) keeps all. */
export function applyMinScore(hits: SearchHit[], minScore: number): SearchHit[] {
  return minScore > 0 ? hits.filter((hit) => hit.score >= minScore) : hits;
}

/** Refuses a document's chunk set with a missing or repeated id (every engine keys chunks by id); returns the ids. */
export function uniqueChunkIds(chunks: readonly EmbeddedChunk[]): Set<string> {
  const seen = new Set<string>();
  for (const chunk of chunks) {
    if (!chunk.id) throw new InvalidInputError("every chunk needs an id");
    if (seen.has(chunk.id)) throw new InvalidInputError(`chunk id ${chunk.id} appears twice`);
    seen.add(chunk.id);
  }
  return seen;
}

/** Chunks found by position, in the order the positions were asked (each once), the unfound left out. */
export function orderByPosition(positions: ChunkPosition[], found: Chunk[]): Chunk[] {
  const keyOf = (kb: string, doc: string, index: number) => `${kb}\u0000${doc}\u0000${index}`;
  const at = new Map(found.map((c) => [keyOf(c.knowledgeBaseId, c.documentId, c.index), c]));
  const seen = new Set<string>();
  return positions.flatMap((p) => {
    const key = keyOf(p.knowledgeBaseId, p.documentId, p.index);
    const chunk = at.get(key);
    if (!chunk || seen.has(key)) return [];
    seen.add(key);
    return [chunk];
  });
}
