// The embedded catalog: knowledge bases and documents in the index's SQLite file. The version and
// status rules live in document-lifecycle.ts; this file only reads, applies them, and writes.
import type { ChunkingSettings, DocumentRecord, DocumentStatus, IngestionProgress, KnowledgeBase, ModelChange } from "../../../lib/domain.ts";
import { AlreadyExistsError, InvalidInputError, NotFoundError } from "../../../lib/errors.ts";
import type { Catalog, KnowledgeBaseUpdate, NewDocumentVersion, NewKnowledgeBase, RegisteredDocument } from "../catalog/catalog.ts";
import { documentIdFor, newKnowledgeBaseId } from "../../../lib/catalog-ids.ts";
import { decideRegistration, progressedDocument } from "../catalog/document-lifecycle.ts";
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./open-database.ts";
import { isUniqueViolation, withDatabase } from "./sqlite-errors.ts";

interface KnowledgeBaseRow {
  id: string;
  name: string;
  description: string;
  embedding_model: string;
  embedding_dimension: number;
  chunking: string;
  created_at: number;
  updated_at: number;
  document_count: number;
  chunk_count: number;
  token_count: number;
  model_change: string | null;
}

interface DocumentRow {
  id: string;
  knowledge_base_id: string;
  file_name: string;
  mime_type: string;
  size_bytes: number;
  content_hash: string;
  version: number;
  status: string;
  progress_percent: number;
  chunk_count: number;
  token_count: number;
  error_message: string;
  chunk_edits: string;
  trace_id: string;
  enabled: number;
  metadata: string;
  created_at: number;
  updated_at: number;
}

// Counts come from the documents so they can never drift: chunks and tokens of ready documents only
// (a document being re-ingested has no settled count), every document for the document count.
const SELECT_KNOWLEDGE_BASE = `
  SELECT kb.*,
    (SELECT COUNT(*) FROM documents d WHERE d.knowledge_base_id = kb.id) AS document_count,
    (SELECT COALESCE(SUM(d.chunk_count), 0) FROM documents d WHERE d.knowledge_base_id = kb.id AND d.status = 'ready') AS chunk_count,
    (SELECT COALESCE(SUM(d.token_count), 0) FROM documents d WHERE d.knowledge_base_id = kb.id AND d.status = 'ready') AS token_count
  FROM knowledge_bases kb`;

export class SqliteCatalog implements Catalog {
  /**
   * Each statement prepared once: a Search naming 20 bases reads each of them, and preparing the
   * knowledge-base query (three subqueries) anew every time was the main thread's largest share
   * under load (docs/benchmarks/stall.md). Every SQL text here is a constant, so the map stays small.
   */
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: SqliteDatabase) {}

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async createKnowledgeBase(input: NewKnowledgeBase): Promise<KnowledgeBase> {
    const name = input.name.trim();
    if (!name) throw new InvalidInputError("a knowledge base needs a name");
    if (!Number.isInteger(input.embeddingDimension) || input.embeddingDimension <= 0) {
      throw new InvalidInputError(`embedding dimension must be a positive integer, got ${input.embeddingDimension}`);
    }
    return withDatabase(this.db, "create knowledge base", () => {
      const id = newKnowledgeBaseId();
      const now = Date.now();
      try {
        this
          .statement(
            `INSERT INTO knowledge_bases (id, name, description, embedding_model, embedding_dimension, chunking, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(id, name, input.description, input.embeddingModel, input.embeddingDimension, JSON.stringify(input.chunking), now, now);
      } catch (error) {
        if (isUniqueViolation(error)) throw new AlreadyExistsError(`a knowledge base named "${name}" already exists`, { cause: error });
        throw error;
      }
      return this.requireKnowledgeBase(id);
    });
  }

  async getKnowledgeBase(idOrName: string): Promise<KnowledgeBase> {
    return withDatabase(this.db, "get knowledge base", () => {
      // An id wins over a name that happens to equal another knowledge base's id.
      const row = (this.statement(`${SELECT_KNOWLEDGE_BASE} WHERE kb.id = ?`).get(idOrName) ??
        this.statement(`${SELECT_KNOWLEDGE_BASE} WHERE kb.name = ?`).get(idOrName)) as KnowledgeBaseRow | undefined;
      if (!row) throw new NotFoundError(`knowledge base ${idOrName} not found`);
      return toKnowledgeBase(row);
    });
  }

  async listKnowledgeBases(): Promise<KnowledgeBase[]> {
    return withDatabase(this.db, "list knowledge bases", () =>
      (this.statement(`${SELECT_KNOWLEDGE_BASE} ORDER BY kb.created_at, kb.name`).all() as KnowledgeBaseRow[]).map(toKnowledgeBase),
    );
  }

  async updateKnowledgeBase(id: string, update: KnowledgeBaseUpdate): Promise<KnowledgeBase> {
    return withDatabase(this.db, "update knowledge base", () => {
      const current = this.requireKnowledgeBase(id);
      const name = update.name ?? current.name;
      try {
        const { changes } = this
          .statement(`UPDATE knowledge_bases SET name = ?, description = ?, chunking = ?, updated_at = ? WHERE id = ?`)
          .run(name, update.description ?? current.description, JSON.stringify(update.chunking ?? current.chunking), Date.now(), id);
        if (changes === 0) throw new NotFoundError(`knowledge base ${id} not found`);
      } catch (error) {
        if (isUniqueViolation(error)) throw new AlreadyExistsError(`a knowledge base named "${name}" already exists`, { cause: error });
        throw error;
      }
      return this.requireKnowledgeBase(id);
    });
  }

  async deleteKnowledgeBase(id: string): Promise<void> {
    withDatabase(this.db, "delete knowledge base", () => {
      // Documents go with it through ON DELETE CASCADE.
      const { changes } = this.statement(`DELETE FROM knowledge_bases WHERE id = ?`).run(id);
      if (changes === 0) throw new NotFoundError(`knowledge base ${id} not found`);
    });
  }

  async saveModelChange(knowledgeBaseId: string, change: ModelChange, options: { switchModel?: boolean } = {}): Promise<KnowledgeBase> {
    return withDatabase(this.db, "save model change", () => {
      const json = JSON.stringify(change);
      const { changes } = options.switchModel
        ? this
            .statement(`UPDATE knowledge_bases SET model_change = ?, embedding_model = ?, embedding_dimension = ?, updated_at = ? WHERE id = ?`)
            .run(json, change.targetModel, change.targetDimension, Date.now(), knowledgeBaseId)
        : this.statement(`UPDATE knowledge_bases SET model_change = ? WHERE id = ?`).run(json, knowledgeBaseId);
      if (changes === 0) throw new NotFoundError(`knowledge base ${knowledgeBaseId} not found`);
      return this.requireKnowledgeBase(knowledgeBaseId);
    });
  }

  async markModelChangeDocuments(knowledgeBaseId: string, documentIds: string[]): Promise<void> {
    withDatabase(this.db, "mark model change documents", () => {
      const insert = this.db.prepare(`INSERT OR IGNORE INTO model_change_documents (knowledge_base_id, document_id) VALUES (?, ?)`);
      this.db.transaction(() => {
        for (const id of documentIds) insert.run(knowledgeBaseId, id);
      })();
    });
  }

  async modelChangeDocuments(knowledgeBaseId: string): Promise<string[]> {
    return withDatabase(this.db, "list model change documents", () =>
      (this.db.prepare(`SELECT document_id FROM model_change_documents WHERE knowledge_base_id = ? ORDER BY document_id`).all(knowledgeBaseId) as { document_id: string }[]).map(
        (row) => row.document_id,
      ),
    );
  }

  async clearModelChangeDocuments(knowledgeBaseId: string): Promise<void> {
    withDatabase(this.db, "clear model change documents", () => {
      this.db.prepare(`DELETE FROM model_change_documents WHERE knowledge_base_id = ?`).run(knowledgeBaseId);
    });
  }

  async registerDocument(input: NewDocumentVersion): Promise<RegisteredDocument> {
    if (!input.fileName) throw new InvalidInputError("a document needs a file name");
    return withDatabase(this.db, "register document", () =>
      this.db
        .transaction(() => {
          this.requireKnowledgeBaseRow(input.knowledgeBaseId);
          const id = documentIdFor(input.knowledgeBaseId, input.fileName);
          const existing = this.findDocument(id);
          const decision = decideRegistration(id, existing, input, new Date());
          if (decision.write) this.saveDocument(decision.result.document);
          return decision.result;
        })
        .immediate(),
    );
  }

  async importDocuments(knowledgeBaseId: string, documents: DocumentRecord[]): Promise<void> {
    withDatabase(this.db, "import documents", () =>
      this.db
        .transaction(() => {
          this.requireKnowledgeBaseRow(knowledgeBaseId);
          for (const document of documents) {
            if (this.findDocument(document.id)) throw new AlreadyExistsError(`document ${document.fileName} is already in knowledge base ${knowledgeBaseId}`);
            this.saveDocument(document);
          }
        })
        .immediate(),
    );
  }

  async getDocument(id: string): Promise<DocumentRecord> {
    return withDatabase(this.db, "get document", () => this.requireDocument(id));
  }

  async listDocuments(knowledgeBaseId: string): Promise<DocumentRecord[]> {
    return withDatabase(this.db, "list documents", () => {
      this.requireKnowledgeBaseRow(knowledgeBaseId);
      const rows = this.statement(`SELECT * FROM documents WHERE knowledge_base_id = ? ORDER BY file_name`).all(knowledgeBaseId) as DocumentRow[];
      return rows.map(toDocument);
    });
  }

  async applyProgress(progress: IngestionProgress): Promise<DocumentRecord | null> {
    return withDatabase(this.db, "apply progress", () =>
      this.db
        .transaction(() => {
          const current = this.findDocument(progress.documentId);
          if (!current || current.knowledgeBaseId !== progress.knowledgeBaseId) return null;
          const next = progressedDocument(current, progress, new Date());
          if (next && next !== current) this.saveDocument(next);
          return next;
        })
        .immediate(),
    );
  }

  async setDocumentEnabled(id: string, enabled: boolean): Promise<DocumentRecord> {
    return withDatabase(this.db, "set document enabled", () => {
      const { changes } = this.statement(`UPDATE documents SET enabled = ?, updated_at = ? WHERE id = ?`).run(enabled ? 1 : 0, Date.now(), id);
      if (changes === 0) throw new NotFoundError(`document ${id} not found`);
      return this.requireDocument(id);
    });
  }

  async setDocumentMetadata(id: string, metadata: Record<string, string>): Promise<DocumentRecord> {
    return withDatabase(this.db, "set document metadata", () => {
      const { changes } = this.statement(`UPDATE documents SET metadata = ?, updated_at = ? WHERE id = ?`).run(JSON.stringify(metadata), Date.now(), id);
      if (changes === 0) throw new NotFoundError(`document ${id} not found`);
      return this.requireDocument(id);
    });
  }

  async deleteDocument(id: string): Promise<void> {
    withDatabase(this.db, "delete document", () => {
      const { changes } = this.statement(`DELETE FROM documents WHERE id = ?`).run(id);
      if (changes === 0) throw new NotFoundError(`document ${id} not found`);
    });
  }

  private requireKnowledgeBase(id: string): KnowledgeBase {
    const row = this.statement(`${SELECT_KNOWLEDGE_BASE} WHERE kb.id = ?`).get(id) as KnowledgeBaseRow | undefined;
    if (!row) throw new NotFoundError(`knowledge base ${id} not found`);
    return toKnowledgeBase(row);
  }

  private requireKnowledgeBaseRow(id: string): void {
    if (!this.statement(`SELECT 1 FROM knowledge_bases WHERE id = ?`).get(id)) throw new NotFoundError(`knowledge base ${id} not found`);
  }

  private findDocument(id: string): DocumentRecord | undefined {
    const row = this.statement(`SELECT * FROM documents WHERE id = ?`).get(id) as DocumentRow | undefined;
    return row && toDocument(row);
  }

  private requireDocument(id: string): DocumentRecord {
    const document = this.findDocument(id);
    if (!document) throw new NotFoundError(`document ${id} not found`);
    return document;
  }

  private saveDocument(document: DocumentRecord): void {
    this
      .statement(
        `INSERT INTO documents (id, knowledge_base_id, file_name, mime_type, size_bytes, content_hash, version, status, progress_percent,
           chunk_count, token_count, error_message, enabled, metadata, created_at, updated_at, chunk_edits, trace_id)
         VALUES (@id, @knowledgeBaseId, @fileName, @mimeType, @sizeBytes, @contentHash, @version, @status, @progressPercent,
           @chunkCount, @tokenCount, @errorMessage, @enabled, @metadata, @createdAt, @updatedAt, @chunkEdits, @traceId)
         ON CONFLICT (id) DO UPDATE SET
           mime_type = excluded.mime_type, size_bytes = excluded.size_bytes, content_hash = excluded.content_hash,
           version = excluded.version, status = excluded.status, progress_percent = excluded.progress_percent,
           chunk_count = excluded.chunk_count, token_count = excluded.token_count, error_message = excluded.error_message,
           enabled = excluded.enabled, metadata = excluded.metadata, updated_at = excluded.updated_at, chunk_edits = excluded.chunk_edits,
           trace_id = excluded.trace_id`,
      )
      .run({
        ...document,
        enabled: document.enabled ? 1 : 0,
        metadata: JSON.stringify(document.metadata),
        createdAt: document.createdAt.getTime(),
        updatedAt: document.updatedAt.getTime(),
        chunkEdits: document.chunkEdits ?? "",
        traceId: document.traceId ?? "",
      });
  }
}

function toKnowledgeBase(row: KnowledgeBaseRow): KnowledgeBase {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    embeddingModel: row.embedding_model,
    embeddingDimension: row.embedding_dimension,
    chunking: JSON.parse(row.chunking) as ChunkingSettings,
    documentCount: row.document_count,
    chunkCount: row.chunk_count,
    tokenCount: row.token_count,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    ...(row.model_change ? { modelChange: modelChangeFromJson(row.model_change) } : {}),
  };
}

function modelChangeFromJson(json: string): ModelChange {
  const parsed = JSON.parse(json) as Omit<ModelChange, "startedAt" | "updatedAt"> & { startedAt: string; updatedAt: string };
  return { ...parsed, startedAt: new Date(parsed.startedAt), updatedAt: new Date(parsed.updatedAt) };
}

function toDocument(row: DocumentRow): DocumentRecord {
  return {
    id: row.id,
    knowledgeBaseId: row.knowledge_base_id,
    fileName: row.file_name,
    mimeType: row.mime_type,
    sizeBytes: row.size_bytes,
    contentHash: row.content_hash,
    version: row.version,
    status: row.status as DocumentStatus,
    progressPercent: row.progress_percent,
    chunkCount: row.chunk_count,
    tokenCount: row.token_count,
    errorMessage: row.error_message,
    enabled: row.enabled === 1,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    ...(row.chunk_edits ? { chunkEdits: row.chunk_edits } : {}),
    ...(row.trace_id ? { traceId: row.trace_id } : {}),
  };
}
