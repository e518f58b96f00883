// Two levels of vectors, one vector list. An engine returns a document's whole-document entry on
// the chunk it is stored with (its first); each entry moves to the chunk of its document that the
// chunk-vector list ranks best (reciprocal rank, the same measure fusion uses; its first chunk when
// that list does not hold it), so the hit a person sees is the passage that matched, not the
// document's opening. The chunk hits and the placed document entries then make ONE list, ranked by
// the better cosine of a chunk and its document (both in the same model's space): the dense
// evidence about a document votes once, as BM25's does, whether it came from a chunk or from the
// whole. Fused as a list of its own, the document list gave dense evidence a second vote, and on
// SciFact that outvoted BM25 (hybrid 0.7225 → 0.6368; docs/EVALUATION.md).
import type { EngineHit, EngineHitList } from "./rrf-fusion.ts";

/** The document list with each entry placed on its document's best chunk by the chunk lists. */
export function placeDocumentHits(documentHits: readonly EngineHit[], chunkLists: readonly EngineHitList[], k: number): EngineHit[] {
  if (documentHits.length === 0) return [];
  const wanted = new Set(documentHits.map((hit) => documentKey(hit)));
  const best = new Map<string, { hit: EngineHit; score: number }>();
  const scores = new Map<string, { hit: EngineHit; score: number }>();
  for (const list of chunkLists) {
    const seen = new Set<string>();
    list.hits.forEach((hit, position) => {
      if (!wanted.has(documentKey(hit)) || seen.has(hit.chunk.id)) return;
      seen.add(hit.chunk.id);
      const entry = scores.get(hit.chunk.id) ?? { hit, score: 0 };
      entry.score += 1 / (k + position + 1);
      scores.set(hit.chunk.id, entry);
    });
  }
  for (const entry of scores.values()) {
    const key = documentKey(entry.hit);
    const current = best.get(key);
    // Ties go to the earlier chunk of the document, so equal inputs always place alike.
    if (!current || entry.score > current.score || (entry.score === current.score && entry.hit.chunk.index < current.hit.chunk.index)) best.set(key, entry);
  }
  return documentHits.map((hit) => {
    const placed = best.get(documentKey(hit));
    return placed ? { ...placed.hit, score: hit.score } : hit;
  });
}

export interface VectorLevels {
  /** Best first by the better cosine of the chunk and (where placed on it) its document; as deep as asked. */
  hits: EngineHit[];
  /** The document entries on the chunks they were placed on, in the document list's order: the explanation. */
  documents: EngineHit[];
}

/**
 * The vector list of a base with document vectors: every chunk hit, with its document's cosine
 * where the document's entry was placed on it, ranked by the better of the two, cut to `limit`.
 * Exact at that depth: a chunk among the best `limit` by the better cosine is among the best
 * `limit` chunks or carries one of the best `limit` documents. Without document hits it is the
 * chunk list unchanged.
 */
export function combineVectorLevels(chunkHits: readonly EngineHit[], documentHits: readonly EngineHit[], k: number, limit: number): VectorLevels {
  if (documentHits.length === 0) return { hits: chunkHits.slice(0, limit), documents: [] };
  const documents = placeDocumentHits(documentHits, [{ name: "vector", hits: [...chunkHits] }], k);
  const best = new Map<string, EngineHit>();
  for (const hit of [...chunkHits, ...documents]) {
    const current = best.get(hit.chunk.id);
    if (!current || hit.score > current.score) best.set(hit.chunk.id, hit);
  }
  // Equal cosines: the chunk id decides, so equal inputs always rank alike on every backend.
  const hits = [...best.values()].sort((a, b) => b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : a.chunk.id > b.chunk.id ? 1 : 0));
  return { hits: hits.slice(0, limit), documents };
}

function documentKey(hit: EngineHit): string {
  return `${hit.chunk.knowledgeBaseId}\u0000${hit.chunk.documentId}`;
}
