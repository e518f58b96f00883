// The public source RPCs and the index/upload adapters a sync runs through: the cursor and source
// records are the index's (SaveSource, ListSourceItems…), submissions go through the gateway's own
// upload path, deletions through the same steps as DeleteDocument.
import { Code, ConnectError, type Client, type ServiceImpl } from "@connectrpc/connect";
import type { Source } from "../gen/quarry/common/v1/source_pb.ts";
import type { QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { IndexService } from "../gen/quarry/index/v1/index_pb.ts";
import { InvalidInputError } from "../lib/errors.ts";
import type { Logger } from "../lib/logger.ts";
import type { SyncPorts } from "./sources/source-sync.ts";
import { Sources } from "./sources/sources.ts";
import type { UploadInput } from "./upload.ts";

export interface SourceRouteDeps {
  index: Client<typeof IndexService>;
  resolveKnowledgeBase(idOrName: string): Promise<{ id: string }>;
  submit(input: UploadInput): Promise<{ document?: { id: string }; unchanged: boolean }>;
  /** DeleteDocument's steps (the index's record and chunks, the kept original). */
  deleteDocument(documentId: string): Promise<void>;
  logger?: Logger;
}

const isNotFound = (error: unknown) => ConnectError.from(error).code === Code.NotFound;

export function sourcesFor(deps: SourceRouteDeps): Sources {
  const { index } = deps;
  const portsFor = (source: Source): SyncPorts => ({
    cursor: async () => (await index.listSourceItems({ sourceId: source.id })).items,
    record: async (item) => void (await index.saveSourceItem({ sourceId: source.id, item })),
    forget: async (itemId) => void (await index.deleteSourceItem({ sourceId: source.id, itemId })),
    submit: async (input) => {
      const result = await deps.submit({ ...input, knowledgeBase: source.knowledgeBaseId });
      return { documentId: result.document!.id, unchanged: result.unchanged };
    },
    deleteDocument: async (documentId) => {
      await deps.deleteDocument(documentId).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    },
    setMetadata: async (documentId, metadata) => void (await index.setDocumentMetadata({ documentId, metadata })),
  });
  return new Sources({
    records: {
      save: async (source) => (await index.saveSource({ source })).source!,
      list: async (knowledgeBaseId) => (await index.listSources({ knowledgeBaseId: knowledgeBaseId ?? "" })).sources,
      delete: async (sourceId) => void (await index.deleteSource({ sourceId })),
    },
    resolveKnowledgeBase: deps.resolveKnowledgeBase,
    portsFor,
    logger: deps.logger,
  });
}

type SourceMethods = Pick<ServiceImpl<typeof QuarryService>, "addSource" | "listSources" | "syncSource" | "removeSource" | "watchSourceSync">;

export function sourceHandlers(sources: Sources): SourceMethods {
  return {
    async addSource(request) {
      if (!request.source) throw new InvalidInputError("send the source to add");
      return { source: await sources.add(request.knowledgeBase, request.source) };
    },
    async listSources(request) {
      return { sources: await sources.list(request.knowledgeBase) };
    },
    async syncSource(request) {
      return { source: await sources.sync(request.knowledgeBase, request.source) };
    },
    async removeSource(request) {
      await sources.remove(request.knowledgeBase, request.source, { deleteDocuments: request.deleteDocuments });
      return {};
    },
    async *watchSourceSync(request, context) {
      for await (const sync of sources.watch(request.knowledgeBase, request.source, context.signal)) yield { sync };
    },
  };
}
