// Chunks corrected, disabled and written by hand (docs/DOCUMENTS.md): a document opened as its
// chunks, an edit re-embedded with the base's model through the embedder the change of model calls
// (model-change.ts's ModelVectorizer) and stored in place, and what a re-ingest keeps of them
// (carry-edits.ts decides; this applies it).
//
// An edited chunk keeps its id. The id is a hash of (document, position, ingested text): it names
// the chunk's place in the document as ingestion cut it, which an edit does not move, and stored
// turns, corrections and citations refer to it, so a new id per edit would break each of them for a
// typo fixed. The text the id was made from stays as revision.originalText, and revision.version
// tells the texts apart. A manual chunk gets a fresh random id (it has no ingested text to hash).
import { createHash, randomUUID } from "node:crypto";
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import type { Chunk, DocumentRecord, EmbeddedChunk } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError } from "../../../lib/errors.ts";
import type { Catalog } from "./catalog.ts";
import { carryEdits, type CarriedEdits } from "./carry-edits.ts";
import type { ModelVectorizer } from "./model-change.ts";
import type { SearchEngine } from "../search/search-engine.ts";
import { normaliseForFind } from "../search/chunk-text-find.ts";

/** A chunk's text is a passage; this bounds a paste gone wrong well above any base's chunk size. */
export const MAX_CHUNK_TEXT_CHARS = 20_000;

export interface ChunkEditsDeps {
  catalog: Pick<Catalog, "getDocument" | "getKnowledgeBase">;
  engine: SearchEngine;
  /** Absent: edits and manual chunks are refused (nothing can embed them). */
  vectorizer?: Pick<ModelVectorizer, "embedDocuments">;
}

export interface DocumentChunks {
  document: DocumentRecord;
  chunks: Chunk[];
  /** Chunks the document has in all, before the query. */
  total: number;
}

export interface ChunkEdit {
  documentId: string;
  chunkId: string;
  text: string;
  tokenCount: number;
  /** 0: whatever version is stored. */
  expectedVersion: number;
}

export interface ManualChunk {
  documentId: string;
  text: string;
  tokenCount: number;
  sectionPath: string[];
  page: number;
}

export class ChunkEdits {
  constructor(private readonly deps: ChunkEditsDeps) {}

  /** The document's chunks in order, enabled or not; query keeps those containing it (as FindChunks matches). */
  async list(documentId: string, query = ""): Promise<DocumentChunks> {
    const document = await this.deps.catalog.getDocument(documentId);
    const chunks = await this.deps.engine.documentChunks(document.knowledgeBaseId, document.id);
    const wanted = normaliseForFind(query);
    return { document, chunks: wanted ? chunks.filter((c) => normaliseForFind(c.text).includes(wanted)) : chunks, total: chunks.length };
  }

  async edit(edit: ChunkEdit): Promise<Chunk> {
    checkText(edit.text);
    const { document, chunk } = await this.chunkOf(edit.documentId, edit.chunkId);
    const version = chunk.revision?.version ?? 1;
    if (edit.expectedVersion && edit.expectedVersion !== version) {
      throw new FailedPreconditionError(`chunk ${chunk.id} is at version ${version}, not ${edit.expectedVersion}: someone edited it meanwhile; reload it and edit again`);
    }
    if (edit.text === chunk.text) return chunk;
    const edited: Chunk = {
      ...chunk,
      text: edit.text,
      tokenCount: edit.tokenCount,
      revision: { version: version + 1, manual: chunk.revision?.manual ?? false, originalText: chunk.revision?.originalText ?? (chunk.revision?.manual ? "" : chunk.text) },
    };
    await this.store(document, edited);
    return edited;
  }

  async setEnabled(documentId: string, chunkId: string, enabled: boolean): Promise<Chunk> {
    const { document, chunk } = await this.chunkOf(documentId, chunkId);
    await this.deps.engine.setChunkDisabled(document.knowledgeBaseId, chunk.id, !enabled);
    const { disabled: _, ...rest } = chunk;
    return enabled ? rest : { ...rest, disabled: true };
  }

  /** A chunk written by hand, placed after the document's last chunk. */
  async add(manual: ManualChunk): Promise<Chunk> {
    checkText(manual.text);
    // Any status: a version still on its way carries the chunk over when it is indexed (carryOver).
    const document = await this.deps.catalog.getDocument(manual.documentId);
    const chunks = await this.deps.engine.documentChunks(document.knowledgeBaseId, document.id);
    const chunk: Chunk = {
      id: createHash("sha256").update(`${document.id}\0manual\0${randomUUID()}`).digest("hex").slice(0, 32),
      documentId: document.id,
      knowledgeBaseId: document.knowledgeBaseId,
      index: chunks.reduce((last, c) => Math.max(last, c.index), -1) + 1,
      text: manual.text,
      tokenCount: manual.tokenCount,
      page: manual.page,
      pageEnd: manual.page,
      sectionPath: manual.sectionPath.map((s) => s.trim()).filter(Boolean),
      start: 0,
      end: 0,
      revision: { version: 1, manual: true, originalText: "" },
    };
    await this.store(document, chunk);
    return chunk;
  }

  /**
   * A new version's chunks with the stored edits carried over (carry-edits.ts): the chunks that need
   * a vector for their text (kept edits, manual chunks) are embedded with the base's model.
   */
  async carryOver(knowledgeBaseId: string, documentId: string, incoming: EmbeddedChunk[]): Promise<{ chunks: EmbeddedChunk[]; carried: CarriedEdits }> {
    const stored = await this.deps.engine.documentChunks(knowledgeBaseId, documentId);
    const carried = carryEdits(stored, incoming);
    const needing = carried.chunks.flatMap((c, i) => ("vector" in c ? [] : [i]));
    if (needing.length === 0) return { chunks: carried.chunks as EmbeddedChunk[], carried };
    const kb = await this.deps.catalog.getKnowledgeBase(knowledgeBaseId, { counts: false });
    const vectors = await this.vectorizer().embedDocuments(kb.embeddingModel, needing.map((i) => embeddingInput(carried.chunks[i])), kb.embeddingDimension);
    const chunks = carried.chunks.map((c, i) => ("vector" in c ? c : { ...c, vector: vectors[needing.indexOf(i)] })) as EmbeddedChunk[];
    return { chunks, carried };
  }

  private async chunkOf(documentId: string, chunkId: string): Promise<{ document: DocumentRecord; chunk: Chunk }> {
    if (!documentId.trim() || !chunkId.trim()) throw new InvalidInputError("name the chunk (chunk_id) and its document (document_id)");
    const document = await this.deps.catalog.getDocument(documentId);
    const [chunk] = await this.deps.engine.getChunks([chunkId]);
    if (!chunk || chunk.documentId !== document.id) throw new NotFoundError(`no chunk ${chunkId} in document ${document.fileName}; it may have been re-ingested since`);
    return { document, chunk };
  }

  private async store(document: DocumentRecord, chunk: Chunk): Promise<void> {
    const kb = await this.deps.catalog.getKnowledgeBase(document.knowledgeBaseId, { counts: false });
    const [vector] = await this.vectorizer().embedDocuments(kb.embeddingModel, [embeddingInput(chunk)], kb.embeddingDimension);
    await this.deps.engine.putChunk(document.knowledgeBaseId, document.id, document.fileName, { ...chunk, vector });
  }

  private vectorizer(): Pick<ModelVectorizer, "embedDocuments"> {
    if (!this.deps.vectorizer) throw new FailedPreconditionError("this index has no embedder to call, so it cannot embed an edited chunk");
    return this.deps.vectorizer;
  }
}

/** What the embedder reads for a chunk, as the ingestion's embedder stage gives it. */
function embeddingInput(chunk: Chunk): string {
  return withHeadingPath(chunk.text, chunk.sectionPath);
}

function checkText(text: string): void {
  if (!text.trim()) throw new InvalidInputError("a chunk's text cannot be empty; disable the chunk instead");
  if (text.length > MAX_CHUNK_TEXT_CHARS) throw new InvalidInputError(`the text is ${text.length} characters long; a chunk holds at most ${MAX_CHUNK_TEXT_CHARS}`);
}
