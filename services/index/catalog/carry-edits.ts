// What a re-ingest does to a document's hand edits (docs/DOCUMENTS.md), as a pure decision over the
// stored chunks and the new version's:
// - an edited chunk is kept when the new version has a chunk whose text is the edited chunk's
//   original text (what ingestion gave it before the edit): the edit is laid over that chunk, which
//   keeps its own id and place. Otherwise the source changed under the edit, and applying it would
//   overwrite text the edit never saw: it is dropped and reported;
// - a chunk disabled by hand stays disabled when the new version has a chunk with its text;
//   otherwise that is dropped and reported too;
// - a manual chunk is kept, after the new version's last chunk (it came from no file, so no new
//   version can change it).
// Matching by text rather than by position: a paragraph inserted above moves every later chunk by
// one place, which must not drop the edits below it.
import type { Chunk, EmbeddedChunk } from "../../../lib/domain.ts";

export interface DroppedEdit {
  chunkId: string;
  index: number;
  /** "edited" or "disabled": what was lost. */
  kind: "edited" | "disabled";
  /** The stored text: the edit, or the disabled chunk's. */
  text: string;
}

export interface CarriedEdits {
  /** The new version's chunks with the edits laid over; those without a vector need one for their text. */
  chunks: (Chunk | EmbeddedChunk)[];
  keptEdits: number;
  keptDisabled: number;
  keptManual: number;
  dropped: DroppedEdit[];
}

export function carryEdits(stored: readonly Chunk[], incoming: readonly EmbeddedChunk[]): CarriedEdits {
  // Unused stored chunks by the text each must find, in document order (the first match takes the first).
  const edits = queueByText(stored.filter((c) => c.revision && !c.revision.manual), (c) => c.revision!.originalText);
  const disabled = queueByText(stored.filter((c) => c.disabled && !c.revision), (c) => c.text);
  let keptEdits = 0;
  let keptDisabled = 0;
  const chunks: (Chunk | EmbeddedChunk)[] = incoming.map((chunk) => {
    const edit = edits.get(chunk.text)?.shift();
    if (edit) {
      keptEdits++;
      const { vector: _, ...place } = chunk;
      return { ...place, text: edit.text, tokenCount: edit.tokenCount, revision: edit.revision, ...(edit.disabled ? { disabled: true } : {}) };
    }
    if (disabled.get(chunk.text)?.shift()) {
      keptDisabled++;
      return { ...chunk, disabled: true };
    }
    return chunk;
  });
  const manual = stored.filter((c) => c.revision?.manual).sort((a, b) => a.index - b.index);
  const last = incoming.reduce((max, c) => Math.max(max, c.index), -1);
  manual.forEach((chunk, i) => chunks.push({ ...chunk, index: last + 1 + i }));
  const dropped: DroppedEdit[] = [
    ...[...edits.values()].flat().map((c) => ({ chunkId: c.id, index: c.index, kind: "edited" as const, text: c.text })),
    ...[...disabled.values()].flat().map((c) => ({ chunkId: c.id, index: c.index, kind: "disabled" as const, text: c.text })),
  ].sort((a, b) => a.index - b.index);
  return { chunks, keptEdits, keptDisabled, keptManual: manual.length, dropped };
}

/** What a re-ingest did to the edits, for a person: "" when there were none. */
export function describeCarriedEdits(carried: CarriedEdits): string {
  const kept = [
    carried.keptEdits && `${carried.keptEdits} edited`,
    carried.keptDisabled && `${carried.keptDisabled} disabled`,
    carried.keptManual && `${carried.keptManual} manual`,
  ].filter(Boolean);
  const parts = kept.length > 0 ? [`kept ${kept.join(", ")} chunk(s)`] : [];
  if (carried.dropped.length > 0) {
    // Numbered from 1, as the console and the CLI show chunks.
    const which = carried.dropped.map((d) => `#${d.index + 1} (${d.kind}: "${snippet(d.text)}")`).join(", ");
    parts.push(`dropped ${carried.dropped.length} edit(s) whose original text is not in this version: ${which}`);
  }
  return parts.join("; ");
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 40 ? `${flat.slice(0, 40)}…` : flat;
}

function queueByText(chunks: readonly Chunk[], key: (c: Chunk) => string): Map<string, Chunk[]> {
  const byText = new Map<string, Chunk[]>();
  for (const chunk of [...chunks].sort((a, b) => a.index - b.index)) byText.set(key(chunk), [...(byText.get(key(chunk)) ?? []), chunk]);
  return byText;
}
