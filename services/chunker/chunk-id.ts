import { chunkId } from "../../lib/catalog-ids.ts";
import type { Chunk, ChunkDraft } from "../../lib/domain.ts";

export { chunkId };

export function toChunks(drafts: readonly ChunkDraft[], documentId: string, knowledgeBaseId: string): Chunk[] {
  return drafts.map((draft) => ({
    ...draft,
    sectionPath: [...draft.sectionPath],
    id: chunkId(documentId, draft.index, draft.text),
    documentId,
    knowledgeBaseId,
  }));
}
