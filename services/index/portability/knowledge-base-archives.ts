// Export and import of a knowledge base (docs/PORTABILITY.md): the catalog's documents and the
// engine's chunks written to an archive one document at a time, and read back into a new base on
// any backend with no parsing and, when the archive carries the same model's vectors, no embedding.
import { chunkId, documentIdFor } from "../../../lib/catalog-ids.ts";
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import { documentInput } from "../../../lib/document-input.ts";
import type { DocumentRecord, EmbeddedChunk, KnowledgeBase } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError } from "../../../lib/errors.ts";
import type { Logger } from "../../../lib/logger.ts";
import type { Catalog } from "../catalog.ts";
import type { ModelVectorizer } from "../model-change.ts";
import type { ImportedDocumentChunks, SearchEngine } from "../search-engine.ts";
import { decodeVector, encodeVector, readArchive, writeArchive, type ArchivedChunk, type ArchivedDocument, type ArchiveHeader } from "./archive-format.ts";

export interface ImportSummary {
  knowledgeBase: KnowledgeBase;
  documents: number;
  chunks: number;
  /** The archive had no vectors: every chunk was embedded again. */
  reembedded: boolean;
}

export interface KnowledgeBaseArchivesDeps {
  catalog: Catalog;
  engine: SearchEngine;
  /** The embedder: whether this Quarry has the archive's model, and vectors for an archive without any. */
  vectorizer?: ModelVectorizer;
  logger?: Logger;
}

/** One archived document made ready for a batch write. */
interface PreparedDocument {
  record: DocumentRecord;
  chunks?: ImportedDocumentChunks;
}

/** The most documents, and chunks, one import batch writes (one catalog _bulk, one chunk _bulk or transaction). */
const BATCH_DOCUMENTS = 200;
const BATCH_CHUNKS = 2_000;

/** The archive's documents in batches of at most BATCH_DOCUMENTS documents and (unless one is bigger) BATCH_CHUNKS chunks. */
async function* importBatches(documents: AsyncIterable<ArchivedDocument>): AsyncGenerator<ArchivedDocument[]> {
  let batch: ArchivedDocument[] = [];
  let chunks = 0;
  for await (const document of documents) {
    if (batch.length > 0 && (batch.length >= BATCH_DOCUMENTS || chunks + document.chunks.length > BATCH_CHUNKS)) {
      yield batch;
      batch = [];
      chunks = 0;
    }
    batch.push(document);
    chunks += document.chunks.length;
  }
  if (batch.length > 0) yield batch;
}

/** Why a document still ingesting at export time arrives failed: its chunks were not yet there. */
const IN_FLIGHT_REASON = "it was still being ingested when its knowledge base was exported; upload it again";

export class KnowledgeBaseArchives {
  constructor(private readonly deps: KnowledgeBaseArchivesDeps) {}

  async export(idOrName: string, options: { vectors: boolean }): Promise<AsyncIterable<Uint8Array>> {
    const { catalog, engine } = this.deps;
    const kb = await catalog.getKnowledgeBase(idOrName, { counts: false });
    if (kb.modelChange?.state === "running") {
      throw new FailedPreconditionError(`knowledge base ${kb.name} is changing its embedding model to ${kb.modelChange.targetModel}; export it when that is done`);
    }
    const header: Omit<ArchiveHeader, "format" | "version"> = {
      exportedAt: new Date().toISOString(),
      knowledgeBase: { name: kb.name, description: kb.description, embeddingModel: kb.embeddingModel, embeddingDimension: kb.embeddingDimension, chunking: kb.chunking },
      vectors: options.vectors,
    };
    async function* documents(): AsyncGenerator<ArchivedDocument> {
      for (const document of await catalog.listDocuments(kb.id)) {
        const stored = document.status === "ready" ? await engine.documentWithVectors(kb.id, document.id) : { chunks: [] };
        yield {
          ...archivedRecord(document),
          wholeDocumentVector: stored.documentVector !== undefined,
          ...(options.vectors && stored.documentVector ? { documentVector: encodeVector(stored.documentVector) } : {}),
          chunks: stored.chunks.map((chunk) => archivedChunk(chunk, options.vectors)),
        };
      }
    }
    return writeArchive(header, documents());
  }

  /**
   * Makes the base and fills it as the archive is read, a batch of documents at a time (one catalog
   * write and one chunk write per batch, the next batch read while one is written, one refresh at
   * the end); when anything fails (a corrupt or truncated archive found mid-way, a store error) the
   * base is deleted again, so nothing is left half-made.
   */
  async import(bytes: AsyncIterable<Uint8Array>, options: { name?: string }): Promise<ImportSummary> {
    const { catalog, engine } = this.deps;
    const archive = await readArchive(bytes);
    const settings = archive.header.knowledgeBase;
    await this.checkModel(settings.embeddingModel, settings.embeddingDimension, archive.header.vectors);
    const name = options.name?.trim() || settings.name;
    const kb = await catalog.createKnowledgeBase({ name, description: settings.description, embeddingModel: settings.embeddingModel, embeddingDimension: settings.embeddingDimension, chunking: settings.chunking });
    let writing: Promise<void> | undefined;
    try {
      await engine.ensureKnowledgeBase(kb.id, kb.embeddingDimension);
      let documents = 0;
      let chunks = 0;
      const fileNames = new Set<string>();
      for await (const batch of importBatches(archive.documents)) {
        for (const archived of batch) {
          if (fileNames.has(archived.fileName)) throw new InvalidInputError(`the archive is corrupt: it holds two documents named ${archived.fileName}`);
          fileNames.add(archived.fileName);
        }
        const prepared = await Promise.all(batch.map((archived) => this.preparedDocument(kb, archived, archive.header.vectors)));
        await writing;
        writing = this.writeBatch(kb, prepared);
        // Kept from rejecting unobserved while the next batch is read; awaited before it is written.
        writing.catch(() => {});
        documents += batch.length;
        chunks += batch.reduce((sum, archived) => sum + archived.chunks.length, 0);
      }
      await writing;
      await engine.finishImport(kb.id);
      return { knowledgeBase: await catalog.getKnowledgeBase(kb.id), documents, chunks, reembedded: !archive.header.vectors };
    } catch (error) {
      await writing?.catch(() => {});
      await engine.dropKnowledgeBase(kb.id).catch((err: unknown) => this.deps.logger?.error({ err, knowledgeBaseId: kb.id }, "could not drop the chunks of a failed import"));
      await catalog.deleteKnowledgeBase(kb.id).catch((err: unknown) => this.deps.logger?.error({ err, knowledgeBaseId: kb.id }, "could not delete the base of a failed import"));
      throw error;
    }
  }

  /** Chunks before the catalog: a document listed ready always has its chunks stored. */
  private async writeBatch(kb: KnowledgeBase, prepared: PreparedDocument[]): Promise<void> {
    await this.deps.engine.importDocuments(kb.id, prepared.flatMap((p) => (p.chunks ? [p.chunks] : [])));
    await this.deps.catalog.importDocuments(kb.id, prepared.map((p) => p.record));
  }

  /** Vectors of one model never mix with another's: the archive's model must be this Quarry's too. */
  private async checkModel(model: string, dimension: number, hasVectors: boolean): Promise<void> {
    const { vectorizer } = this.deps;
    if (!vectorizer) {
      if (hasVectors) return;
      throw new FailedPreconditionError("this archive has no vectors and this index has no embedder to embed its chunks");
    }
    let info: { dimension: number };
    try {
      info = await vectorizer.modelInfo(model);
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof InvalidInputError) {
        throw new FailedPreconditionError(`the archive's embedding model ${model} is not installed in this Quarry (${error.message}); install it (quarry models fetch ${model}) and import again`);
      }
      throw error;
    }
    if (info.dimension !== dimension) {
      throw new FailedPreconditionError(`the archive's vectors have ${dimension} dimensions, but this Quarry's model ${model} makes ${info.dimension}: they are not the same model`);
    }
  }

  /** The document's catalog record as the archive left it, and its chunks when it was ready. */
  private async preparedDocument(kb: KnowledgeBase, archived: ArchivedDocument, hasVectors: boolean): Promise<PreparedDocument> {
    const id = documentIdFor(kb.id, archived.fileName);
    const now = new Date();
    const ready = archived.status === "ready";
    const record: DocumentRecord = {
      id,
      knowledgeBaseId: kb.id,
      fileName: archived.fileName,
      mimeType: archived.mimeType,
      sizeBytes: archived.sizeBytes,
      contentHash: archived.contentHash,
      version: archived.version,
      status: ready ? "ready" : "failed",
      progressPercent: 100,
      chunkCount: ready ? archived.chunkCount : 0,
      tokenCount: ready ? archived.tokenCount : 0,
      errorMessage: ready ? "" : archived.status === "failed" ? archived.errorMessage || "ingestion failed" : IN_FLIGHT_REASON,
      enabled: archived.enabled !== false,
      metadata: archived.metadata ?? {},
      createdAt: now,
      updatedAt: now,
    };
    if (!ready) return { record };
    const { chunks, documentVector } = await this.embeddedChunks(kb, id, archived, hasVectors);
    return { record, chunks: { documentId: id, fileName: archived.fileName, enabled: record.enabled, chunks, ...(documentVector ? { documentVector } : {}) } };
  }

  private async embeddedChunks(kb: KnowledgeBase, documentId: string, archived: ArchivedDocument, hasVectors: boolean): Promise<{ chunks: EmbeddedChunk[]; documentVector?: Float32Array }> {
    const chunks = archived.chunks.map(({ vector: _vector, ...chunk }) => ({ ...chunk, id: chunkId(documentId, chunk.index, chunk.text), documentId, knowledgeBaseId: kb.id }));
    const dimension = kb.embeddingDimension;
    if (hasVectors) {
      return {
        chunks: chunks.map((chunk, i) => {
          const vector = archived.chunks[i].vector;
          if (!vector) throw new InvalidInputError(`the archive is corrupt: chunk ${chunk.index} of ${archived.fileName} has no vector`);
          return { ...chunk, vector: decodeVector(vector, dimension, `chunk ${chunk.index} of ${archived.fileName}`) };
        }),
        ...(archived.documentVector ? { documentVector: decodeVector(archived.documentVector, dimension, `the document vector of ${archived.fileName}`) } : {}),
      };
    }
    // The same inputs ingestion embeds: each chunk under its headings, and the document rebuilt from its chunks.
    const texts = [...chunks.map((c) => withHeadingPath(c.text, c.sectionPath)), ...(archived.wholeDocumentVector ? [documentInput(chunks)] : [])];
    const vectors = texts.length === 0 ? [] : await this.deps.vectorizer!.embedDocuments(kb.embeddingModel, texts, dimension);
    return {
      chunks: chunks.map((chunk, i) => ({ ...chunk, vector: vectors[i] })),
      ...(archived.wholeDocumentVector ? { documentVector: vectors[chunks.length] } : {}),
    };
  }
}

function archivedRecord(document: DocumentRecord): Omit<ArchivedDocument, "chunks" | "wholeDocumentVector" | "documentVector"> {
  return {
    fileName: document.fileName,
    mimeType: document.mimeType,
    sizeBytes: document.sizeBytes,
    contentHash: document.contentHash,
    version: document.version,
    status: document.status,
    errorMessage: document.errorMessage,
    enabled: document.enabled,
    metadata: document.metadata,
    chunkCount: document.chunkCount,
    tokenCount: document.tokenCount,
    createdAt: document.createdAt.toISOString(),
  };
}

/** Every field of the chunk but its ids (and its vector unless kept), so fields added to Chunk travel too. */
function archivedChunk(chunk: EmbeddedChunk, withVector: boolean): ArchivedChunk {
  const { id: _id, documentId: _documentId, knowledgeBaseId: _knowledgeBaseId, vector, ...rest } = chunk;
  return { ...rest, ...(withVector ? { vector: encodeVector(vector) } : {}) };
}
