import type { Chunk, SearchHit } from "../../../lib/domain.ts";

export interface ChunkPosition {
  knowledgeBaseId: string;
  documentId: string;
  index: number;
}

export interface NeighbourDeps {
  /** The chunks stored at these places; places with no chunk are left out. */
  chunksAt(positions: ChunkPosition[]): Promise<Chunk[]>;
  countTokens(text: string): number;
}

export interface NeighbourExpansion {
  hits: SearchHit[];
  /** Adjacent chunks merged in. */
  merged: number;
}

/** More than a few chunks either side stops being a neighbourhood and becomes the document. */
export const MAX_NEIGHBOUR_CHUNKS = 5;

const key = (documentId: string, index: number) => `${documentId}\u0000${index}`;

/**
 * Merges each hit with the chunks next to it in its document, nearest first and alternating
 * before/after, while the hits' combined tokens stay within the budget (the hits themselves are
 * counted first, so expansion never pushes a hit out of the context). Higher-ranked hits expand
 * first; a chunk that is itself a hit, or already merged into a better one, is not repeated.
 * The merged hit keeps its id, score and explain (listing the merged chunks) and spans their
 * offsets, so a citation points at the whole passage the model read.
 */
export async function expandNeighbours(hits: SearchHit[], window: number, tokenBudget: number, deps: NeighbourDeps): Promise<NeighbourExpansion> {
  if (window <= 0 || hits.length === 0) return { hits, merged: 0 };
  const reach = Math.min(window, MAX_NEIGHBOUR_CHUNKS);
  const wanted: ChunkPosition[] = [];
  for (const hit of hits) {
    for (let d = 1; d <= reach; d++) {
      const { knowledgeBaseId, documentId, index } = hit.chunk;
      if (index - d >= 0) wanted.push({ knowledgeBaseId, documentId, index: index - d });
      wanted.push({ knowledgeBaseId, documentId, index: index + d });
    }
  }
  const stored = new Map((await deps.chunksAt(wanted)).map((c) => [key(c.documentId, c.index), c]));
  const taken = new Set(hits.map((h) => key(h.chunk.documentId, h.chunk.index)));
  let left = tokenBudget - hits.reduce((sum, h) => sum + h.chunk.tokenCount, 0);
  let merged = 0;
  const expanded = hits.map((hit) => {
    const before: Chunk[] = [];
    const after: Chunk[] = [];
    const open = { before: true, after: true };
    for (let d = 1; d <= reach && (open.before || open.after); d++) {
      for (const side of ["before", "after"] as const) {
        if (!open[side]) continue;
        const at = side === "before" ? hit.chunk.index - d : hit.chunk.index + d;
        const chunk = stored.get(key(hit.chunk.documentId, at));
        // A gap (no chunk, already used, or too big) ends that side: a merged passage stays contiguous.
        if (!chunk || taken.has(key(chunk.documentId, chunk.index)) || chunk.tokenCount > left) {
          open[side] = false;
          continue;
        }
        taken.add(key(chunk.documentId, chunk.index));
        left -= chunk.tokenCount;
        (side === "before" ? before : after).push(chunk);
      }
    }
    if (before.length + after.length === 0) return hit;
    merged += before.length + after.length;
    const pieces = [...before.reverse(), hit.chunk, ...after];
    const text = joinSpans(pieces);
    return {
      ...hit,
      chunk: {
        ...hit.chunk,
        text,
        tokenCount: deps.countTokens(text),
        start: pieces[0].start,
        end: pieces.at(-1)!.end,
        page: pieces[0].page,
        pageEnd: Math.max(...pieces.map((p) => p.pageEnd)),
      },
      explain: { ...hit.explain, mergedChunkIds: pieces.filter((p) => p.id !== hit.chunk.id).map((p) => p.id) },
    };
  });
  return { hits: expanded, merged };
}

/**
 * Joins chunks in document order. A chunk's text is exactly its [start, end) span, so the overlap
 * the chunker repeats at the start of the next chunk is cut by offset; a gap (whitespace the
 * chunker dropped) becomes a line break.
 */
export function joinSpans(pieces: Pick<Chunk, "text" | "start" | "end">[]): string {
  let text = pieces[0].text;
  let end = pieces[0].end;
  for (const piece of pieces.slice(1)) {
    const exact = piece.end - piece.start === piece.text.length;
    if (exact && piece.start < end) text += piece.text.slice(Math.min(end - piece.start, piece.text.length));
    else text += (piece.start === end && exact ? "" : piece.start - end >= 2 ? "\n\n" : "\n") + piece.text;
    end = Math.max(end, piece.end);
  }
  return text;
}
