// A document as one input of its embedding model, rebuilt from its chunks. The chunker makes it at
// ingestion and the index makes it again when a base changes its model (the parsed text is not
// kept), so both must build it the same way: from the chunks' spans, not from the parsed text.
import { withHeadingPath } from "./chunk-context.ts";
import type { ChunkDraft } from "./domain.ts";

type ChunkSpan = Pick<ChunkDraft, "index" | "text" | "start" | "end" | "sectionPath">;

/**
 * The chunks' text in document order, each overlap once (spans are offsets into the same parsed
 * text) and a gap between spans as one line break, under the first chunk's heading path — the
 * document's title where it has one, as every chunk's input carries it. A one-chunk document's input
 * is exactly its chunk's, so the embedder can reuse that vector.
 */
export function documentInput(chunks: readonly ChunkSpan[]): string {
  if (chunks.length === 0) return "";
  const ordered = [...chunks].sort((a, b) => a.index - b.index);
  let text = "";
  let end = ordered[0].start;
  for (const chunk of ordered) {
    if (chunk.end <= end && text) continue;
    if (chunk.start > end && text) text += "\n";
    text += chunk.text.slice(Math.max(0, end - chunk.start));
    end = chunk.end;
  }
  return withHeadingPath(text, ordered[0].sectionPath);
}
