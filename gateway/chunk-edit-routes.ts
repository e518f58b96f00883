// The public chunk edits: a document opened as its chunks, a chunk's text corrected, a chunk disabled
// or enabled, a chunk written by hand. The index stores and re-embeds (services/index/catalog/chunk-edits.ts);
// the gateway first counts a new text's tokens with the chunker, in the base's model and settings, so
// a text longer than the base's chunks (which the model would read only in part) is refused here.
import type { Client } from "@connectrpc/connect";
import type { ChunkerService } from "../gen/quarry/chunker/v1/chunker_pb.ts";
import type { AddChunkRequest, EditChunkRequest, ListDocumentChunksRequest, SetChunkEnabledRequest } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { InvalidInputError } from "../lib/errors.ts";

export interface ChunkEditPeers {
  index: Client<typeof IndexService>;
  chunker: Client<typeof ChunkerService>;
}

export class ChunkEditing {
  constructor(private readonly peers: ChunkEditPeers) {}

  async list(request: ListDocumentChunksRequest) {
    const documentId = required(request.documentId, "document_id");
    return this.peers.index.listDocumentChunks({ documentId, query: request.query });
  }

  async edit(request: EditChunkRequest) {
    const documentId = required(request.documentId, "document_id");
    const chunkId = required(request.chunkId, "chunk_id");
    const text = request.text.trim();
    const tokenCount = await this.countTokens(documentId, text);
    return this.peers.index.editChunk({ documentId, chunkId, text, tokenCount, expectedVersion: request.expectedVersion });
  }

  async setEnabled(request: SetChunkEnabledRequest) {
    return this.peers.index.setChunkEnabled({ documentId: required(request.documentId, "document_id"), chunkId: required(request.chunkId, "chunk_id"), enabled: request.enabled });
  }

  async add(request: AddChunkRequest) {
    const documentId = required(request.documentId, "document_id");
    const text = request.text.trim();
    const tokenCount = await this.countTokens(documentId, text);
    return this.peers.index.addChunk({ documentId, text, tokenCount, sectionPath: request.sectionPath, page: request.page });
  }

  /** The text's tokens in the base's model; InvalidInputError when it is empty or more than one of the base's chunks. */
  private async countTokens(documentId: string, text: string): Promise<number> {
    if (!text) throw new InvalidInputError("a chunk's text cannot be empty; disable the chunk instead");
    const { document } = await this.peers.index.getDocument({ documentId });
    const { knowledgeBase: kb } = await this.peers.index.getKnowledgeBase({ knowledgeBase: document!.knowledgeBaseId });
    const { settings } = await this.peers.chunker.resolveChunkingSettings({ settings: kb!.chunking, embeddingModel: kb!.embeddingModel });
    const preview = await this.peers.chunker.previewChunks({ document: { text, mimeType: "text/plain" }, settings, maxChunks: 1, embeddingModel: kb!.embeddingModel });
    if (preview.totalChunks > 1) {
      throw new InvalidInputError(
        `the text is longer than one chunk of knowledge base ${kb!.name} (at most ${settings!.chunkSize} tokens of ${kb!.embeddingModel}); shorten it, or add the rest as another chunk`,
      );
    }
    return preview.totalTokens;
  }
}

function required(value: string, field: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw new InvalidInputError(`${field} is required`);
  return trimmed;
}
