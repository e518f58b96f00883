// Chunks with reproducible vectors for the approximate-index tests: a test and a child process it
// kills rebuild the same vector from (document, index) alone, so the test can query every surviving
// chunk by its own vector without reading it back from the store under test.
import type { EmbeddedChunk, SearchQuery } from "../../../lib/domain.ts";

export const FIXTURE_DIMENSION = 32;

/** A normalised vector drawn from (document, index) by a small seeded generator (mulberry32). */
export function fixtureVector(documentId: string, index: number, dimension = FIXTURE_DIMENSION): Float32Array {
  let state = 0;
  for (const char of `${documentId}#${index}`) state = (Math.imul(state, 31) + char.charCodeAt(0)) >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  const vector = Float32Array.from({ length: dimension }, next);
  const norm = Math.hypot(...vector);
  return vector.map((x) => x / norm);
}

export function fixtureChunk(knowledgeBaseId: string, documentId: string, index: number): EmbeddedChunk {
  const text = `chunk ${index} of ${documentId}`;
  return {
    id: `${documentId}-${index}`,
    documentId,
    knowledgeBaseId,
    index,
    text,
    tokenCount: 5,
    page: 1,
    pageEnd: 1,
    sectionPath: [],
    start: 0,
    end: text.length,
    vector: fixtureVector(documentId, index),
  };
}

export function fixtureDocument(knowledgeBaseId: string, documentId: string, chunks: number): EmbeddedChunk[] {
  return Array.from({ length: chunks }, (_, index) => fixtureChunk(knowledgeBaseId, documentId, index));
}

/** A dense-only query for a vector. */
export function vectorQuery(knowledgeBaseId: string, vector: Float32Array, topK: number, documentIds: string[] = []): SearchQuery {
  return { knowledgeBaseIds: [knowledgeBaseId], text: "", mode: "vector", vector, topK, minScore: 0, documentIds };
}
