import type { ConnectRouter } from "@connectrpc/connect";
import { IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import {
  chunkingFromProto,
  chunkToProto,
  documentToProto,
  hitToProto,
  knowledgeBaseToProto,
  modeFromProto,
} from "../../lib/proto-convert.ts";
import type { ApiKeyRegistry } from "./api-key-registry.ts";
import { apiKeyHandlers } from "./api-key-routes.ts";
import type { AssistantRegistry } from "./assistant-registry.ts";
import type { ConversationRegistry } from "./conversation-registry.ts";
import { conversationHandlers } from "./conversation-routes.ts";
import { checkKnowledgeBaseName } from "../../lib/catalog-ids.ts";
import type { Catalog } from "./catalog.ts";
import type { SearchEngine } from "./search-engine.ts";

export interface IndexDeps {
  catalog: Catalog;
  engine: SearchEngine;
  apiKeys: ApiKeyRegistry;
  assistants: AssistantRegistry;
  conversations: ConversationRegistry;
}

/** A search can name at most this many results; more is a mistake, not a use. */
const MAX_TOP_K = 1000;

export function indexRoutes({ catalog, engine, apiKeys, assistants, conversations }: IndexDeps) {
  return (router: ConnectRouter) =>
    router.service(IndexService, {
      ...apiKeyHandlers(apiKeys),
      ...conversationHandlers(assistants, conversations),
      async createKnowledgeBase(request) {
        const chunking = chunkingFromProto(request.chunking);
        if (!request.name.trim()) throw new InvalidInputError("a knowledge base needs a name");
        checkKnowledgeBaseName(request.name.trim());
        if (!request.embeddingModel || !request.embeddingDimension) {
          throw new InvalidInputError("a knowledge base needs its embedding model and dimension");
        }
        if (!chunking.chunkSize) throw new InvalidInputError("a knowledge base needs its chunking settings");
        const kb = await catalog.createKnowledgeBase({
          name: request.name.trim(),
          description: request.description,
          embeddingModel: request.embeddingModel,
          embeddingDimension: request.embeddingDimension,
          chunking: { strategy: "recursive", chunkSize: chunking.chunkSize, chunkOverlap: chunking.chunkOverlap ?? 0, separators: chunking.separators ?? [] },
        });
        await engine.ensureKnowledgeBase(kb.id, kb.embeddingDimension);
        return { knowledgeBase: knowledgeBaseToProto(kb) };
      },
      async getKnowledgeBase(request) {
        return { knowledgeBase: knowledgeBaseToProto(await catalog.getKnowledgeBase(request.knowledgeBase)) };
      },
      async listKnowledgeBases() {
        return { knowledgeBases: (await catalog.listKnowledgeBases()).map(knowledgeBaseToProto) };
      },
      async deleteKnowledgeBase(request) {
        const kb = await catalog.getKnowledgeBase(request.knowledgeBaseId);
        await engine.dropKnowledgeBase(kb.id);
        await catalog.deleteKnowledgeBase(kb.id);
        return {};
      },
      async registerDocument(request) {
        const kb = await catalog.getKnowledgeBase(request.knowledgeBaseId);
        const { document, unchanged } = await catalog.registerDocument({
          knowledgeBaseId: kb.id,
          fileName: request.fileName,
          mimeType: request.mimeType,
          sizeBytes: Number(request.sizeBytes),
          contentHash: request.contentHash,
          version: Number(request.version),
          metadata: { ...request.metadata },
        });
        return { document: documentToProto(document), unchanged };
      },
      async getDocument(request) {
        return { document: documentToProto(await catalog.getDocument(request.documentId)) };
      },
      async listDocuments(request) {
        const kb = await catalog.getKnowledgeBase(request.knowledgeBaseId);
        return { documents: (await catalog.listDocuments(kb.id)).map(documentToProto) };
      },
      async setDocumentEnabled(request) {
        const doc = await catalog.getDocument(request.documentId);
        await engine.setDocumentEnabled(doc.knowledgeBaseId, doc.id, request.enabled);
        return { document: documentToProto(await catalog.setDocumentEnabled(doc.id, request.enabled)) };
      },
      async deleteDocument(request) {
        const doc = await catalog.getDocument(request.documentId);
        await engine.deleteDocument(doc.knowledgeBaseId, doc.id);
        await catalog.deleteDocument(doc.id);
        return {};
      },
      async search(request) {
        if (request.knowledgeBaseIds.length === 0) throw new InvalidInputError("name at least one knowledge base to search");
        if (request.topK > MAX_TOP_K) throw new InvalidInputError(`top_k is at most ${MAX_TOP_K}, got ${request.topK}`);
        const mode = modeFromProto(request.mode);
        const kbs = await Promise.all(request.knowledgeBaseIds.map((id) => catalog.getKnowledgeBase(id)));
        const vector = request.vector.length ? Float32Array.from(request.vector) : undefined;
        if (mode !== "bm25") {
          if (!vector) throw new InvalidInputError(`${mode} search needs the query vector`);
          const wrong = kbs.find((kb) => kb.embeddingDimension !== vector.length);
          if (wrong) {
            throw new FailedPreconditionError(
              `knowledge base ${wrong.name} holds ${wrong.embeddingDimension}-dim vectors (${wrong.embeddingModel}); the query vector has ${vector.length}`,
            );
          }
        }
        if (mode === "bm25" && !request.text.trim()) throw new InvalidInputError("keyword search needs query text");
        const hits = await engine.search({
          knowledgeBaseIds: kbs.map((kb) => kb.id),
          text: request.text,
          vector,
          mode,
          topK: request.topK || 10,
          minScore: request.minScore,
          documentIds: [...request.documentIds],
          candidates: request.candidates || undefined,
          rrfK: request.rrfK || undefined,
          weights: request.weights ? { bm25: request.weights.bm25, vector: request.weights.vector } : undefined,
        });
        return { hits: hits.map(hitToProto) };
      },
      async getChunks(request) {
        return { chunks: (await engine.getChunks([...request.chunkIds])).map(chunkToProto) };
      },
    });
}
