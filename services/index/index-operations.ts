// IndexOperations: the index's application layer for knowledge bases, documents, search and
// chunks, between routes.ts (protobuf ↔ domain) and the adapters (Catalog, SearchEngine): each
// request's checks that need the catalog or are the service's policy, once, and the order in which
// the two stores change. The query's own shape and its vector's dimension are checked by the
// engine's search ladder (search/hybrid-search.ts), which every backend runs, so they are not
// repeated here. (Not named IndexService: that is the generated service definition.)
import type { Chunk, ChunkingSettings, DocumentRecord, KnowledgeBase, SearchHit, SearchQuery } from "../../lib/domain.ts";
import { checkKnowledgeBaseName } from "../../lib/catalog-ids.ts";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import { activeTraceId } from "../../lib/tracing/spans.ts";
import type { Catalog, KnowledgeBaseUpdate, NewDocumentVersion, NewKnowledgeBase, RegisteredDocument } from "./catalog/catalog.ts";
import { documentsMatching } from "./catalog/metadata-filter.ts";
import type { ChunkPosition, SearchEngine } from "./search/search-engine.ts";
import type { ChunkFind } from "./search/chunk-text-find.ts";
import type { ModelChanges } from "./catalog/model-change.ts";

/** A knowledge base to create; chunking settings left out are filled with their defaults. */
export type KnowledgeBaseRequest = Omit<NewKnowledgeBase, "chunking"> & { chunking: Partial<ChunkingSettings> };

/** An update; chunking, when given, replaces the base's settings whole (fields left out take their defaults). */
export type KnowledgeBaseUpdateRequest = Omit<KnowledgeBaseUpdate, "chunking"> & { chunking?: Partial<ChunkingSettings> };

/** A document version to register; knowledgeBaseId may also be the knowledge base's name. */
export type DocumentVersionRequest = NewDocumentVersion;

/** A search; knowledgeBaseIds may also name knowledge bases, and topK defaults to DEFAULT_TOP_K. */
export type SearchRequest = Omit<SearchQuery, "topK"> & Partial<Pick<SearchQuery, "topK">>;

export const DEFAULT_TOP_K = 10;
/** A search can name at most this many results; more is a mistake, not a use. */
export const MAX_TOP_K = 1000;
/** Neighbour look-ups ask for a few chunks around each hit; thousands would be a document dump. */
export const MAX_POSITIONS = 1000;

/** Chunks a find returns when the request names no limit, and the most it may name. */
export const DEFAULT_FIND_LIMIT = 20;
export const MAX_FIND_LIMIT = 100;
/**
 * Chunks a find reads at most. A find reads every chunk of the bases (there is no index of
 * substrings): measured on SQLite, 100,000 chunks of ~600 characters in 3–4 s on the shared 2-core
 * machine under a load of 15, which a debugging call may spend; the cap bounds the worst case.
 */
export const MAX_FIND_SCAN = 500_000;

export class IndexOperations {
  constructor(private readonly stores: { catalog: Catalog; engine: SearchEngine; modelChanges?: ModelChanges }) {}

  async createKnowledgeBase(request: KnowledgeBaseRequest): Promise<KnowledgeBase> {
    const name = request.name.trim();
    if (!name) throw new InvalidInputError("a knowledge base needs a name");
    checkKnowledgeBaseName(name);
    if (!request.embeddingModel || !request.embeddingDimension) {
      throw new InvalidInputError("a knowledge base needs its embedding model and dimension");
    }
    const { chunking } = request;
    if (!chunking.chunkSize) throw new InvalidInputError("a knowledge base needs its chunking settings");
    const kb = await this.stores.catalog.createKnowledgeBase({ ...request, name, chunking: wholeChunking(chunking) });
    await this.stores.engine.ensureKnowledgeBase(kb.id, kb.embeddingDimension);
    return kb;
  }

  async getKnowledgeBase(idOrName: string): Promise<KnowledgeBase> {
    const kb = await this.stores.catalog.getKnowledgeBase(idOrName);
    if (!(await this.waitedForSwitch([kb.id]))) return kb;
    return this.stores.catalog.getKnowledgeBase(kb.id);
  }

  listKnowledgeBases(): Promise<KnowledgeBase[]> {
    return this.stores.catalog.listKnowledgeBases();
  }

  /**
   * The chunking settings arrive validated for the base's model (the gateway asks the chunker). New
   * settings while a change of model runs are refused: the change checked the old chunk size
   * against the new model's input limit.
   */
  async updateKnowledgeBase(idOrName: string, update: KnowledgeBaseUpdateRequest): Promise<KnowledgeBase> {
    const kb = await this.stores.catalog.getKnowledgeBase(idOrName);
    const checked: KnowledgeBaseUpdate = { ...update, chunking: update.chunking && wholeChunking(update.chunking) };
    if (update.name !== undefined) {
      checked.name = update.name.trim();
      if (!checked.name) throw new InvalidInputError("a knowledge base needs a name");
      checkKnowledgeBaseName(checked.name);
    }
    if (update.chunking) {
      if (!update.chunking.chunkSize) throw new InvalidInputError("chunking settings need a chunk size");
      if (kb.modelChange?.state === "running") {
        throw new FailedPreconditionError(`knowledge base ${kb.name} is changing its embedding model to ${kb.modelChange.targetModel}; change its chunking when that is done`);
      }
    }
    return this.stores.catalog.updateKnowledgeBase(kb.id, checked);
  }

  /**
   * The engine's chunks go first: if that fails, the catalog still names the knowledge base and the
   * delete can be retried, where the other order would leave chunks no catalog entry leads to.
   */
  async deleteKnowledgeBase(idOrName: string): Promise<void> {
    const kb = await this.stores.catalog.getKnowledgeBase(idOrName);
    await this.stores.engine.dropKnowledgeBase(kb.id);
    await this.stores.catalog.deleteKnowledgeBase(kb.id);
  }

  /** Starts re-embedding the base with the model (model-change.ts); the base comes back with model_change RUNNING. */
  async changeEmbeddingModel(knowledgeBase: string, model: string): Promise<KnowledgeBase> {
    if (!this.stores.modelChanges) throw new FailedPreconditionError("this index cannot change embedding models: it has no embedder to call");
    return this.stores.modelChanges.start(knowledgeBase, model);
  }

  async registerDocument(request: DocumentVersionRequest): Promise<RegisteredDocument> {
    const kb = await this.stores.catalog.getKnowledgeBase(request.knowledgeBaseId);
    // The registration runs inside the upload's trace (its RPC carries traceparent), which the version's ingestion continues.
    const traceId = activeTraceId();
    return this.stores.catalog.registerDocument({ ...request, knowledgeBaseId: kb.id, ...(traceId ? { traceId } : {}) });
  }

  getDocument(id: string): Promise<DocumentRecord> {
    return this.stores.catalog.getDocument(id);
  }

  async listDocuments(knowledgeBase: string): Promise<DocumentRecord[]> {
    const kb = await this.stores.catalog.getKnowledgeBase(knowledgeBase);
    return this.stores.catalog.listDocuments(kb.id);
  }

  /** The engine first, so the catalog never shows a state the search does not honour. */
  async setDocumentEnabled(id: string, enabled: boolean): Promise<DocumentRecord> {
    const doc = await this.stores.catalog.getDocument(id);
    await this.stores.engine.setDocumentEnabled(doc.knowledgeBaseId, doc.id, enabled);
    return this.stores.catalog.setDocumentEnabled(doc.id, enabled);
  }

  /** The engine first, as for a knowledge base: a failed delete stays visible and retryable. */
  async deleteDocument(id: string): Promise<void> {
    const doc = await this.stores.catalog.getDocument(id);
    await this.stores.engine.deleteDocument(doc.knowledgeBaseId, doc.id);
    await this.stores.catalog.deleteDocument(doc.id);
  }

  /** The signal fires when the caller goes away: the engine then drops a search it has not started. */
  async search(request: SearchRequest, signal?: AbortSignal): Promise<SearchHit[]> {
    const topK = request.topK || DEFAULT_TOP_K;
    if (topK > MAX_TOP_K) throw new InvalidInputError(`top_k is at most ${MAX_TOP_K}, got ${topK}`);
    if (request.mode === "bm25" && !request.text.trim()) throw new InvalidInputError("keyword search needs query text");
    const kbs = await Promise.all(request.knowledgeBaseIds.map((id) => this.stores.catalog.getKnowledgeBase(id)));
    const { metadataEquals = {}, ...query } = request;
    const knowledgeBaseIds = kbs.map((kb) => kb.id);
    // The metadata filter becomes the document filter every engine applies (metadata-filter.ts).
    const matching = await documentsMatching(this.stores.catalog, knowledgeBaseIds, metadataEquals, request.documentIds);
    // No document has the metadata: nothing can match (an empty id list would mean "all").
    if (matching?.length === 0) return [];
    await this.waitedForSwitch(knowledgeBaseIds);
    return this.stores.engine.search({ ...query, knowledgeBaseIds, topK, documentIds: matching ?? request.documentIds }, { signal });
  }

  /** Waits while a base's change of model swaps its vectors (milliseconds); true when it waited. */
  private async waitedForSwitch(knowledgeBaseIds: string[]): Promise<boolean> {
    const changes = this.stores.modelChanges;
    if (!changes || !changes.isSwitching(knowledgeBaseIds)) return false;
    await changes.notSwitching(knowledgeBaseIds);
    return true;
  }

  /** Chunks of the bases (ids or names) whose text contains the text (search/chunk-text-find.ts). */
  async findChunks(request: { knowledgeBaseIds: string[]; text: string; limit: number; documentIds: string[] }): Promise<ChunkFind> {
    const limit = request.limit || DEFAULT_FIND_LIMIT;
    if (limit > MAX_FIND_LIMIT) throw new InvalidInputError(`limit is at most ${MAX_FIND_LIMIT}, got ${limit}`);
    const kbs = await Promise.all(request.knowledgeBaseIds.map((id) => this.stores.catalog.getKnowledgeBase(id)));
    return this.stores.engine.findChunks({ ...request, knowledgeBaseIds: kbs.map((kb) => kb.id), limit, maxScan: MAX_FIND_SCAN });
  }

  /** Chunks by id, then chunks by position (a hit's neighbours). */
  async getChunks(ids: string[], positions: ChunkPosition[] = []): Promise<Chunk[]> {
    if (positions.length > MAX_POSITIONS) throw new InvalidInputError(`at most ${MAX_POSITIONS} chunk positions at once, got ${positions.length}`);
    if (positions.some((p) => !p.knowledgeBaseId || !p.documentId)) throw new InvalidInputError("a chunk position needs its knowledge base id and document id");
    const [byId, byPosition] = await Promise.all([this.stores.engine.getChunks(ids), this.stores.engine.getChunksAt(positions)]);
    return [...byId, ...byPosition];
  }
}

/** Settings as the catalog stores them: every field present, the parent's only with a parent mode. */
function wholeChunking(chunking: Partial<ChunkingSettings>): ChunkingSettings {
  return {
    strategy: "recursive",
    chunkSize: chunking.chunkSize ?? 0,
    chunkOverlap: chunking.chunkOverlap ?? 0,
    separators: chunking.separators ?? [],
    ...(chunking.parent ? { parent: chunking.parent, parentMaxTokens: chunking.parentMaxTokens } : {}),
    ...(chunking.documentVector ? { documentVector: chunking.documentVector } : {}),
  };
}
