// The public chunk look-up: a cited chunk expanded to its whole text and the chunks on each side of it
// in its document, read from the index by the chunk's id and then by position. The chunk must belong to
// the document the request names, since that document is what a key's scope is checked against.
import type { Client } from "@connectrpc/connect";
import type { GetChunkNeighboursRequest } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { InvalidInputError, NotFoundError } from "../lib/errors.ts";

export const MAX_NEIGHBOURS = 5;

export async function chunkNeighbours(index: Client<typeof IndexService>, request: GetChunkNeighboursRequest) {
  const documentId = request.documentId.trim();
  const chunkId = request.chunkId.trim();
  if (!documentId || !chunkId) throw new InvalidInputError("name the chunk (chunk_id) and its document (document_id), as a citation carries them");
  if (request.neighbours > MAX_NEIGHBOURS) throw new InvalidInputError(`neighbours is ${request.neighbours}; at most ${MAX_NEIGHBOURS} chunks on each side`);
  const around = request.neighbours || 1;
  const document = (await index.getDocument({ documentId })).document!;
  const [chunk] = (await index.getChunks({ chunkIds: [chunkId] })).chunks;
  if (!chunk || chunk.documentId !== documentId) throw new NotFoundError(`no chunk ${chunkId} in document ${documentId} (${document.fileName}); it may have been re-ingested since it was cited`);
  const positions = [];
  for (let i = Math.max(0, chunk.index - around); i <= chunk.index + around; i++) {
    if (i !== chunk.index) positions.push({ documentId, index: i, knowledgeBaseId: document.knowledgeBaseId });
  }
  const others = (await index.getChunks({ positions })).chunks.sort((a, b) => a.index - b.index);
  return { chunk, before: others.filter((c) => c.index < chunk.index), after: others.filter((c) => c.index > chunk.index) };
}
