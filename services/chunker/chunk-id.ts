import { createHash } from "node:crypto";
import type { Chunk, ChunkDraft } from "../../lib/domain.ts";

/**
 * A chunk's id: the same document, position and text always give the same id, so re-indexing an
 * unchanged document overwrites rather than duplicates, while an edited chunk gets a new id.
 * 128 bits of sha256 keep ids short with no practical chance of collision.
 */
export function chunkId(documentId: string, index: number, text: string): string {
  return createHash("sha256").update(`${documentId}\0${index}\0${text}`).digest("hex").slice(0, 32);
}

export function toChunks(drafts: readonly ChunkDraft[], documentId: string, knowledgeBaseId: string): Chunk[] {
  return drafts.map((draft) => ({
    ...draft,
    sectionPath: [...draft.sectionPath],
    id: chunkId(documentId, draft.index, draft.text),
    documentId,
    knowledgeBaseId,
  }));
}
