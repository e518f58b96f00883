// The document-vector list at chunk level. An engine returns a document's entry on the chunk it is
// stored with (its first); before fusion each entry moves to the chunk of its document that the
// chunk lists rank best (reciprocal rank over them, the same measure fusion uses), so a document
// the whole-document vector finds and a chunk of it that BM25 or the chunk vectors find add up on
// one hit — the document counted once per list, as document-level fusion would — and the hit a
// person sees is the passage that matched, not the document's opening. A document the chunk lists
// do not hold keeps its first chunk.
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

function documentKey(hit: EngineHit): string {
  return `${hit.chunk.knowledgeBaseId}\u0000${hit.chunk.documentId}`;
}
