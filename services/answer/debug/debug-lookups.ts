// What the retrieval debugger reads beyond a retrieval: stored turns, the chunks that hold a text,
// chunks and documents by id. adapters/index-debug-lookups.ts reaches them through the index service.
import type { Turn } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import type { Chunk, ChunkFind, DocumentRecord } from "../../../lib/domain.ts";

export interface DebugLookups {
  /** NotFoundError when there is no such turn. */
  getTurn(id: string): Promise<Turn>;
  findChunks(request: { knowledgeBaseIds: string[]; text: string; limit: number; documentIds: string[] }): Promise<ChunkFind>;
  /** Unknown ids are left out. */
  getChunks(ids: string[]): Promise<Chunk[]>;
  /** Undefined when there is no such document. */
  findDocument(id: string): Promise<DocumentRecord | undefined>;
}
