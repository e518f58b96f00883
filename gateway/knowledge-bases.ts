// The gateway's application layer for knowledge bases: the calls that take more than one service
// (or a look-up by name before the call), so that the routes only relay. Works on the contracts'
// messages, as the gateway owns no domain of its own.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { ChunkerService } from "../gen/quarry/chunker/v1/chunker_pb.ts";
import type { ChunkingSettingsSchema, Document, KnowledgeBase } from "../gen/quarry/common/v1/common_pb.ts";
import type { EmbedderService } from "../gen/quarry/embedder/v1/embedder_pb.ts";
import type { PreviewChunksRequest, PreviewChunksResponse, UpdateKnowledgeBaseRequest } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import type { ParserService } from "../gen/quarry/parser/v1/parser_pb.ts";
import { InvalidInputError } from "../lib/errors.ts";

export interface KnowledgeBasePeers {
  index: Client<typeof IndexService>;
  chunker: Client<typeof ChunkerService>;
  parser: Client<typeof ParserService>;
  embedder: Client<typeof EmbedderService>;
}

export interface NewKnowledgeBaseRequest {
  name: string;
  description: string;
  /** Empty: the embedder's default model. */
  embeddingModel: string;
  /** Unset fields take the chunker's defaults. */
  chunking?: MessageInitShape<typeof ChunkingSettingsSchema>;
}

type PreviewRequest = Pick<PreviewChunksRequest, "content" | "fileName" | "mimeType" | "settings" | "knowledgeBase" | "maxChunks">;
type Preview = Pick<PreviewChunksResponse, "chunks" | "totalChunks" | "totalTokens" | "settings" | "parents" | "documentVector">;

export class KnowledgeBases {
  constructor(private readonly peers: KnowledgeBasePeers) {}

  /**
   * The embedder answers for the model (loading it if it is local and installed), so a base is
   * never created for a model nothing can embed with; the chunker fills in the chunking settings
   * for that model; the index records the base.
   */
  async create(request: NewKnowledgeBaseRequest): Promise<KnowledgeBase | undefined> {
    const { index, chunker, embedder } = this.peers;
    const model = await embedder.getModelInfo({ model: request.embeddingModel });
    const { settings } = await chunker.resolveChunkingSettings({ settings: request.chunking, embeddingModel: model.model });
    const res = await index.createKnowledgeBase({
      name: request.name,
      description: request.description,
      embeddingModel: model.model,
      embeddingDimension: model.dimension,
      chunking: settings,
    });
    return res.knowledgeBase;
  }

  /** By id or name; NotFound from the index when there is none. */
  async get(knowledgeBase: string): Promise<KnowledgeBase> {
    return (await this.peers.index.getKnowledgeBase({ knowledgeBase })).knowledgeBase!;
  }

  /** The index runs the change (it calls the embedder itself); progress is on the base it returns. */
  async changeEmbeddingModel(knowledgeBase: string, embeddingModel: string): Promise<KnowledgeBase> {
    return (await this.peers.index.changeEmbeddingModel({ knowledgeBase, embeddingModel })).knowledgeBase!;
  }

  /**
   * New chunking settings are resolved and checked by the chunker for the base's model (unset
   * fields take the defaults, a chunk larger than the model reads is refused), as at creation.
   */
  async update(request: Pick<UpdateKnowledgeBaseRequest, "knowledgeBase" | "name" | "description" | "chunking">): Promise<KnowledgeBase> {
    const { index, chunker } = this.peers;
    const kb = await this.get(request.knowledgeBase);
    const chunking = request.chunking && (await chunker.resolveChunkingSettings({ settings: request.chunking, embeddingModel: kb.embeddingModel })).settings;
    const res = await index.updateKnowledgeBase({ knowledgeBase: kb.id, name: request.name, description: request.description, chunking });
    return res.knowledgeBase!;
  }

  /** Returns the deleted base's id. */
  async delete(knowledgeBase: string): Promise<string> {
    const { id } = await this.get(knowledgeBase);
    await this.peers.index.deleteKnowledgeBase({ knowledgeBaseId: id });
    return id;
  }

  async listDocuments(knowledgeBase: string): Promise<Document[]> {
    const { id } = await this.get(knowledgeBase);
    return (await this.peers.index.listDocuments({ knowledgeBaseId: id })).documents;
  }

  /** Parses and chunks a file as a knowledge base would (its settings, or the ones given), storing nothing. */
  async previewChunks(request: PreviewRequest): Promise<Preview> {
    const { chunker, parser } = this.peers;
    if (request.content.byteLength === 0) throw new InvalidInputError("the preview needs a non-empty file");
    let settings = request.settings;
    if (!settings && request.knowledgeBase) settings = (await this.get(request.knowledgeBase)).chunking;
    const resolved = await chunker.resolveChunkingSettings({ settings });
    const { document } = await parser.parse({ content: request.content, fileName: request.fileName, mimeType: request.mimeType });
    const preview = await chunker.previewChunks({ document, settings: resolved.settings, maxChunks: request.maxChunks });
    return { chunks: preview.chunks, totalChunks: preview.totalChunks, totalTokens: preview.totalTokens, settings: resolved.settings, parents: preview.parents, documentVector: preview.documentVector };
  }
}
