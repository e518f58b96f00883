// Export and import of a knowledge base (docs/PORTABILITY.md): the catalog's documents and the
// engine's chunks written to an archive one document at a time, and read back into a new base on
// any backend with no parsing and, when the archive carries the same model's vectors, no embedding.
import { chunkId, documentIdFor } from "../../../lib/catalog-ids.ts";
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import { CORRECTION_METADATA } from "../../../lib/correction-document.ts";
import { documentInput } from "../../../lib/document-input.ts";
import type { Assistant, DocumentRecord, EmbeddedChunk, KnowledgeBase } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError } from "../../../lib/errors.ts";
import type { Logger } from "../../../lib/logger.ts";
import type { AssistantRegistry } from "../assistants/assistant-registry.ts";
import type { Catalog } from "../catalog/catalog.ts";
import type { ModelVectorizer } from "../catalog/model-change.ts";
import type { ImportedDocumentChunks, SearchEngine } from "../search/search-engine.ts";
import { decodeVector, encodeVector, readArchive, writeArchive, type ArchivedChunk, type ArchivedDocument, type ArchiveHeader } from "./archive-format.ts";
import { archivedKnowledgeBase, exportedAssistants, importedAssistant, planAssistants, refuseModelChange, type ExportedAssistants } from "./assistant-archive.ts";

export interface ImportSummary {
  knowledgeBase: KnowledgeBase;
  documents: number;
  chunks: number;
  /** The archive had no vectors: every chunk was embedded again. */
  reembedded: boolean;
  /** The assistants made from the archive, mounting the new base. */
  assistants: Assistant[];
  /** Their corrections (documents of their corrections bases). */
  corrections: number;
  /** The archive's manifest: what its export left out. */
  notes: string[];
}

export interface KnowledgeBaseArchivesDeps {
  catalog: Catalog;
  engine: SearchEngine;
  /** Absent: archives are written without assistants, and one that holds some is refused. */
  assistants?: AssistantRegistry;
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

  async export(idOrName: string, options: { vectors: boolean; assistants?: boolean }): Promise<AsyncIterable<Uint8Array>> {
    const { catalog } = this.deps;
    const kb = await catalog.getKnowledgeBase(idOrName, { counts: false });
    refuseModelChange(kb);
    const assistants: ExportedAssistants = options.assistants ? await exportedAssistants(this.registry(), catalog, kb) : { archived: [], corrections: [], manifest: [] };
    const header: Omit<ArchiveHeader, "format" | "version"> = {
      exportedAt: new Date().toISOString(),
      knowledgeBase: archivedKnowledgeBase(kb),
      vectors: options.vectors,
      ...(options.assistants ? { assistants: assistants.archived, manifest: assistants.manifest } : {}),
    };
    const archived = (base: KnowledgeBase, records: DocumentRecord[], correctionsOf?: number) => this.archivedDocuments(base, records, options.vectors, correctionsOf);
    async function* documents(): AsyncGenerator<ArchivedDocument> {
      yield* archived(kb, await catalog.listDocuments(kb.id));
      for (const [i, corrections] of assistants.corrections.entries()) {
        if (corrections) yield* archived(corrections.knowledgeBase, corrections.documents, i);
      }
    }
    return writeArchive(header, documents());
  }

  private async *archivedDocuments(kb: KnowledgeBase, records: DocumentRecord[], vectors: boolean, correctionsOf?: number): AsyncGenerator<ArchivedDocument> {
    for (const document of records) {
      const stored = document.status === "ready" ? await this.deps.engine.documentWithVectors(kb.id, document.id) : { chunks: [] };
      yield {
        ...archivedRecord(document),
        wholeDocumentVector: stored.documentVector !== undefined,
        ...(vectors && stored.documentVector ? { documentVector: encodeVector(stored.documentVector) } : {}),
        chunks: stored.chunks.map((chunk) => archivedChunk(chunk, vectors)),
        ...(correctionsOf !== undefined ? { correctionsOf } : {}),
      };
    }
  }

  private registry(): AssistantRegistry {
    if (!this.deps.assistants) throw new FailedPreconditionError("this index keeps no assistants, so none can be exported or imported");
    return this.deps.assistants;
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
    const { header } = archive;
    const settings = header.knowledgeBase;
    await this.checkModel(settings.embeddingModel, settings.embeddingDimension, header.vectors);
    const archivedAssistants = header.assistants ?? [];
    for (const entry of archivedAssistants) {
      if (entry.corrections) await this.checkModel(entry.corrections.knowledgeBase.embeddingModel, entry.corrections.knowledgeBase.embeddingDimension, header.vectors);
    }
    const name = options.name?.trim() || settings.name;
    const planned = archivedAssistants.length > 0 ? await planAssistants(this.registry(), catalog, archivedAssistants, name) : [];
    const kb = await catalog.createKnowledgeBase({ name, description: settings.description, embeddingModel: settings.embeddingModel, embeddingDimension: settings.embeddingDimension, chunking: settings.chunking });
    // Every base this import made, the assistants' corrections bases after the base: all deleted again on failure.
    const made: KnowledgeBase[] = [kb];
    const assistants: Assistant[] = [];
    let writing: Promise<void> | undefined;
    try {
      const correctionsBases: (KnowledgeBase | undefined)[] = [];
      for (const [i, entry] of archivedAssistants.entries()) {
        const archived = entry.corrections?.knowledgeBase;
        const base = archived && (await catalog.createKnowledgeBase({ ...archived, name: planned[i].correctionsBaseName! }));
        if (base) made.push(base);
        correctionsBases.push(base);
      }
      for (const base of made) await engine.ensureKnowledgeBase(base.id, base.embeddingDimension);
      let documents = 0;
      let chunks = 0;
      let corrections = 0;
      const fileNames = new Set<string>();
      for await (const batch of importBatches(archive.documents)) {
        const prepared = await Promise.all(
          batch.map((archived) => {
            const into = archived.correctionsOf === undefined ? kb : correctionsBases[archived.correctionsOf]!;
            if (fileNames.has(`${into.id}/${archived.fileName}`)) throw new InvalidInputError(`the archive is corrupt: it holds two documents named ${archived.fileName} in one base`);
            fileNames.add(`${into.id}/${archived.fileName}`);
            // A correction names its assistant, which has a new id here.
            const document = archived.correctionsOf === undefined ? archived : { ...archived, metadata: { ...archived.metadata, [CORRECTION_METADATA.assistantId]: planned[archived.correctionsOf].id } };
            return this.preparedDocument(into, document, header.vectors);
          }),
        );
        await writing;
        writing = this.writeBatch(prepared);
        // Kept from rejecting unobserved while the next batch is read; awaited before it is written.
        writing.catch(() => {});
        for (const archived of batch) {
          if (archived.correctionsOf === undefined) {
            documents++;
            chunks += archived.chunks.length;
          } else corrections++;
        }
      }
      await writing;
      for (const base of made) await engine.finishImport(base.id);
      // Last, so an assistant is there only once everything it reads is.
      for (const [i, entry] of archivedAssistants.entries()) {
        assistants.push(await this.registry().create(importedAssistant(entry, planned[i], kb.id), { id: planned[i].id, correctionsKnowledgeBaseId: correctionsBases[i]?.id ?? "" }));
      }
      return { knowledgeBase: await catalog.getKnowledgeBase(kb.id), documents, chunks, reembedded: !header.vectors, assistants, corrections, notes: header.manifest ?? [] };
    } catch (error) {
      await writing?.catch(() => {});
      for (const assistant of assistants) {
        await this.deps.assistants?.delete(assistant.id).catch((err: unknown) => this.deps.logger?.error({ err, assistantId: assistant.id }, "could not delete an assistant of a failed import"));
      }
      for (const base of made) {
        await engine.dropKnowledgeBase(base.id).catch((err: unknown) => this.deps.logger?.error({ err, knowledgeBaseId: base.id }, "could not drop the chunks of a failed import"));
        await catalog.deleteKnowledgeBase(base.id).catch((err: unknown) => this.deps.logger?.error({ err, knowledgeBaseId: base.id }, "could not delete the base of a failed import"));
      }
      throw error;
    }
  }

  /** Chunks before the catalog: a document listed ready always has its chunks stored. */
  private async writeBatch(prepared: PreparedDocument[]): Promise<void> {
    for (const knowledgeBaseId of new Set(prepared.map((p) => p.record.knowledgeBaseId))) {
      const ofBase = prepared.filter((p) => p.record.knowledgeBaseId === knowledgeBaseId);
      await this.deps.engine.importDocuments(knowledgeBaseId, ofBase.flatMap((p) => (p.chunks ? [p.chunks] : [])));
      await this.deps.catalog.importDocuments(knowledgeBaseId, ofBase.map((p) => p.record));
    }
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
