// A managed correction is one passage, however long. The pipeline chunks its document like any
// other, so a long answer, or many wordings, spans several chunks, and only the first starts with
// the wordings the question gate compares. Each candidate of the corrections base is therefore read
// back whole — every chunk of its document by position, joined in order with their overlaps cut by
// offset — before the gate: any of its chunks finds it, the gate sees every wording, and the
// answer quotes (and the model reads) all of it. Chunks of one correction are one candidate, at the
// best-ranked one's place.
import type { Chunk, SearchHit } from "../../../lib/domain.ts";
import { joinSpans, type ChunkPosition } from "./neighbour-expansion.ts";

/** The most chunks read back for one correction: far above what CorrectAnswer's limits make at the smallest chunk size. */
export const MAX_CORRECTION_CHUNKS = 2_000;
/** The first read covers this many chunks past the one found; a longer correction is read on in growing steps. */
const FIRST_READ = 16;

export type ChunksAt = (positions: ChunkPosition[]) => Promise<Chunk[]>;

/**
 * The candidates with each correction whole, one per document, in the order of their best chunk.
 * A document whose chunks do not run unbroken from the first (re-chunked meanwhile) keeps the chunk
 * that was found, as it was.
 */
export async function readWholeCorrections(hits: readonly SearchHit[], chunksAt: ChunksAt): Promise<SearchHit[]> {
  const best = new Map<string, SearchHit>();
  for (const hit of hits) if (!best.has(hit.chunk.documentId)) best.set(hit.chunk.documentId, hit);
  if (best.size === 0) return [];
  const read = new Map<string, Chunk[]>([...best.keys()].map((id) => [id, []]));
  // Per document still being read: the next index to ask for and the end of this round's range.
  let open = [...best.values()].map((hit) => ({ hit, from: 0, to: Math.min(MAX_CORRECTION_CHUNKS, hit.chunk.index + 1 + FIRST_READ) }));
  while (open.length > 0) {
    const positions = open.flatMap(({ hit, from, to }) =>
      Array.from({ length: to - from }, (_, i) => ({ knowledgeBaseId: hit.chunk.knowledgeBaseId, documentId: hit.chunk.documentId, index: from + i })),
    );
    const got = await chunksAt(positions);
    for (const chunk of got) read.get(chunk.documentId)?.push(chunk);
    // A document whose last asked-for chunk came back may go on.
    open = open
      .filter(({ hit, to }) => to < MAX_CORRECTION_CHUNKS && got.some((c) => c.documentId === hit.chunk.documentId && c.index === to - 1))
      .map(({ hit, to }) => ({ hit, from: to, to: Math.min(MAX_CORRECTION_CHUNKS, to * 4) }));
  }
  return [...best.values()].map((hit) => {
    const chunks = [...new Map(read.get(hit.chunk.documentId)!.map((c) => [c.index, c])).values()].sort((a, b) => a.index - b.index);
    if (chunks.length === 0 || chunks.some((c, i) => c.index !== i) || !chunks.some((c) => c.id === hit.chunk.id)) return hit;
    return {
      ...hit,
      chunk: {
        ...hit.chunk,
        text: joinSpans(chunks),
        // Overlaps counted twice: an upper bound, which is what budgets need.
        tokenCount: chunks.reduce((n, c) => n + c.tokenCount, 0),
        start: chunks[0].start,
        end: chunks.at(-1)!.end,
        page: chunks[0].page,
        pageEnd: Math.max(...chunks.map((c) => c.pageEnd)),
        // Already whole: not read again as a parent.
        parent: undefined,
      },
    };
  });
}
