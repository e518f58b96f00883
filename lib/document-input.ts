// A document as one input of its embedding model, rebuilt from its chunks. The chunker makes it at
// ingestion and the index makes it again when a base changes its model (the parsed text is not
// kept), so both must build it the same way: from the chunks' spans, not from the parsed text.
import type { ChunkDraft } from "./domain.ts";

type ChunkSpan = Pick<ChunkDraft, "index" | "text" | "start" | "end">;

/**
 * The chunks' text in document order, each overlap once (spans are offsets into the same parsed
 * text) and a gap between spans as one line break. No heading path: a chunk gets its section's
 * path because it lost the heading above it, but the whole document still holds its headings, and
 * prepending the first one again weighted the title twice — on ArguAna, where the title is the
 * debate's topic shared by every argument of it, that made a debate's arguments look alike
 * (docs/EVALUATION.md).
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
  return text;
}
