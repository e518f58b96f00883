// The index's RPCs: protobuf ↔ domain around IndexOperations (index-operations.ts), which checks and
// coordinates; nothing here decides anything.
import type { ConnectRouter } from "@connectrpc/connect";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { CancelledError, UnavailableError } from "../../lib/errors.ts";
import { noMetrics, type Metrics } from "../../lib/metrics/metrics.ts";
import { optionsThenData } from "../../lib/stream-head.ts";
import { chunkingFromProto, chunkToProto, documentToProto, documentVersionFromProto, hitToProto, knowledgeBaseToProto, searchFromProto } from "../../lib/proto-convert.ts";
import type { ApiKeyRegistry } from "./keys/api-key-registry.ts";
import { apiKeyHandlers } from "./keys/api-key-routes.ts";
import { assistantToProto } from "./assistants/assistant-proto.ts";
import type { AssistantRegistry } from "./assistants/assistant-registry.ts";
import { assistantHandlers } from "./assistants/assistant-routes.ts";
import type { ConversationRegistry } from "./conversations/conversation-registry.ts";
import { conversationHandlers } from "./conversations/conversation-routes.ts";
import type { Catalog } from "./catalog/catalog.ts";
import type { ModelChanges, ModelVectorizer } from "./catalog/model-change.ts";
import { KnowledgeBaseArchives } from "./portability/knowledge-base-archives.ts";
import { ChunkEdits } from "./catalog/chunk-edits.ts";
import { IndexOperations } from "./index-operations.ts";
import type { SearchEngine } from "./search/search-engine.ts";
import type { SourceStore } from "./sources/source-store.ts";
import { sourceHandlers } from "./sources/source-routes.ts";

export interface IndexDeps {
  catalog: Catalog;
  engine: SearchEngine;
  apiKeys: ApiKeyRegistry;
  assistants: AssistantRegistry;
  conversations: ConversationRegistry;
  /** Absent: ChangeEmbeddingModel answers unimplemented. */
  modelChanges?: ModelChanges;
  /** The embedder, for an import: whether it has the archive's model, and vectors for one without. */
  vectorizer?: ModelVectorizer;
  /** Absent: chunks are listed and disabled, but edits and manual chunks are refused (no embedder). */
  chunkEdits?: ChunkEdits;
  /** Sources and their cursors; absent: the source RPCs answer unavailable. */
  sources?: SourceStore;
  /** Where each search's latency is recorded, labelled with the backend's name (sqlite, opensearch, elasticsearch). */
  metrics?: Metrics;
  backend?: string;
}

export function indexRoutes({
  catalog,
  engine,
  apiKeys,
  assistants,
  conversations,
  modelChanges,
  vectorizer,
  chunkEdits = new ChunkEdits({ catalog, engine }),
  sources = noSources,
  metrics = noMetrics,
  backend = "unknown",
}: IndexDeps) {
  const index = new IndexOperations({ catalog, engine, modelChanges });
  const archives = new KnowledgeBaseArchives({ catalog, engine, assistants, vectorizer });
  return (router: ConnectRouter) =>
    router.service(IndexService, {
      ...apiKeyHandlers(apiKeys),
      ...assistantHandlers(assistants),
      ...conversationHandlers(conversations),
      ...sourceHandlers(sources, catalog),
      async setDocumentMetadata(request) {
        return { document: documentToProto(await catalog.setDocumentMetadata(request.documentId, { ...request.metadata })) };
      },
      async createKnowledgeBase(request) {
        const kb = await index.createKnowledgeBase({
          name: request.name,
          description: request.description,
          embeddingModel: request.embeddingModel,
          embeddingDimension: request.embeddingDimension,
          chunking: chunkingFromProto(request.chunking),
        });
        return { knowledgeBase: knowledgeBaseToProto(kb) };
      },
      async getKnowledgeBase(request) {
        return { knowledgeBase: knowledgeBaseToProto(await index.getKnowledgeBase(request.knowledgeBase)) };
      },
      async listKnowledgeBases(request) {
        const named = request.knowledgeBases;
        const kbs = named.length > 0 ? await Promise.all(named.map((n) => index.getKnowledgeBase(n))) : await index.listKnowledgeBases();
        return { knowledgeBases: kbs.map(knowledgeBaseToProto) };
      },
      async deleteKnowledgeBase(request) {
        await index.deleteKnowledgeBase(request.knowledgeBaseId);
        return {};
      },
      async updateKnowledgeBase(request) {
        const kb = await index.updateKnowledgeBase(request.knowledgeBase, {
          ...(request.name !== undefined ? { name: request.name } : {}),
          ...(request.description !== undefined ? { description: request.description } : {}),
          ...(request.chunking ? { chunking: chunkingFromProto(request.chunking) } : {}),
        });
        return { knowledgeBase: knowledgeBaseToProto(kb) };
      },
      async changeEmbeddingModel(request) {
        return { knowledgeBase: knowledgeBaseToProto(await index.changeEmbeddingModel(request.knowledgeBase, request.embeddingModel)) };
      },
      async registerDocument(request) {
        const { document, unchanged } = await index.registerDocument(documentVersionFromProto(request));
        return { document: documentToProto(document), unchanged };
      },
      async getDocument(request) {
        return { document: documentToProto(await index.getDocument(request.documentId)) };
      },
      async listDocuments(request) {
        return { documents: (await index.listDocuments(request.knowledgeBaseId)).map(documentToProto) };
      },
      async setDocumentEnabled(request) {
        return { document: documentToProto(await index.setDocumentEnabled(request.documentId, request.enabled)) };
      },
      async deleteDocument(request) {
        await index.deleteDocument(request.documentId);
        return {};
      },
      async search(request, context) {
        const query = searchFromProto(request);
        const started = performance.now();
        // The call's signal fires when its caller goes away (a reset stream, a passed deadline).
        const hits = await index.search(query, context.signal).catch((error: unknown) => {
          if (error instanceof CancelledError) metrics.searchCancelled(backend);
          throw error;
        });
        metrics.search(query.mode, backend, (performance.now() - started) / 1000);
        return { hits: hits.map(hitToProto) };
      },
      async getChunks(request) {
        const positions = request.positions.map((p) => ({ knowledgeBaseId: p.knowledgeBaseId, documentId: p.documentId, index: p.index }));
        return { chunks: (await index.getChunks([...request.chunkIds], positions)).map(chunkToProto) };
      },
      async *exportKnowledgeBase(request) {
        for await (const data of await archives.export(request.knowledgeBase, { vectors: !request.withoutVectors, assistants: request.withAssistants })) yield { data };
      },
      async importKnowledgeBase(requests) {
        const { options, data } = await optionsThenData(requests, "an import");
        const summary = await archives.import(data, { name: options.name });
        return {
          knowledgeBase: knowledgeBaseToProto(summary.knowledgeBase),
          documents: summary.documents,
          chunks: BigInt(summary.chunks),
          reembedded: summary.reembedded,
          assistants: summary.assistants.map(assistantToProto),
          corrections: summary.corrections,
          notes: summary.notes,
        };
      },
      async findChunks(request) {
        const found = await index.findChunks({ knowledgeBaseIds: [...request.knowledgeBaseIds], text: request.text, limit: request.limit, documentIds: [...request.documentIds] });
        return {
          chunks: found.chunks.map((c) => ({ chunk: chunkToProto(c.chunk), fileName: c.fileName, enabled: c.enabled, exact: c.exact })),
          matched: found.matched,
          scanned: BigInt(found.scanned),
          complete: found.complete,
        };
      },
      async listDocumentChunks(request) {
        const { document, chunks, total } = await chunkEdits.list(request.documentId, request.query);
        return { document: documentToProto(document), chunks: chunks.map(chunkToProto), total };
      },
      async editChunk(request) {
        const { documentId, chunkId, text, tokenCount, expectedVersion } = request;
        return { chunk: chunkToProto(await chunkEdits.edit({ documentId, chunkId, text, tokenCount, expectedVersion })) };
      },
      async setChunkEnabled(request) {
        return { chunk: chunkToProto(await chunkEdits.setEnabled(request.documentId, request.chunkId, request.enabled)) };
      },
      async addChunk(request) {
        const chunk = await chunkEdits.add({ documentId: request.documentId, text: request.text, tokenCount: request.tokenCount, sectionPath: [...request.sectionPath], page: request.page });
        return { chunk: chunkToProto(chunk) };
      },
    });
}

const refuse = async (): Promise<never> => {
  throw new UnavailableError("this index was assembled without a source store");
};
const noSources: SourceStore = { save: refuse, get: refuse, list: refuse, delete: refuse, items: refuse, saveItem: refuse, deleteItem: refuse };
