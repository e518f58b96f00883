// The embedded search engine: chunk rows in SQLite, BM25 through one FTS5 table per knowledge base
// over jieba-segmented terms (so its statistics are the base's own), and exact cosine kNN through one
// sqlite-vec vec0 table per knowledge base (vectors of different dimensions cannot share a vec0
// column); space-tables.ts names and defines them. Document vectors (a document embedded whole) sit in a
// second vec0 table beside it, named after it, keyed by the rowid of the document's first chunk: they
// are deleted, disabled and swapped with the chunk rows by the same rowids, and a shadow's document
// table is the shadow's vector table's name plus the same suffix, so a swap moves both. The lists
// feed the shared ladder of search/hybrid-search.ts.
import type { Chunk, ChunkParent, ChunkRevision, EmbeddedChunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, NotFoundError, throwIfCancelled, UnavailableError } from "../../../lib/errors.ts";
import type { EngineHit } from "../search/rrf-fusion.ts";
import { hybridSearch } from "../search/hybrid-search.ts";
import { checkDimensions, type ChunkPosition, type ImportedDocumentChunks, type SearchCallOptions, type SearchEngine, type StoredDocumentChunks } from "../search/search-engine.ts";
import { findInPages, validateChunkFind, type ChunkFind, type ChunkFindRequest, type ScannedChunk } from "../search/chunk-text-find.ts";
import { orderByPosition, uniqueChunkIds } from "../search/search-query.ts";
import { averageRowLength, weightedQueryTerms } from "../search/query-terms.ts";
import type { SqliteDatabase } from "./open-database.ts";
import { bm25Parameters, bm25Sql, createKeywordTable, deleteKeywordRowSql, keywordIndexSize, keywordTableName, keywordTerms, vectorTableName } from "./space-tables.ts";
import { withDatabase } from "./sqlite-errors.ts";
import { ApproximateKnn, chooseKnnPlan, DEFAULT_APPROXIMATE_KNN, type ApproximateKnnOptions, type ApproximateKnnRole, type Neighbour } from "./approximate-knn.ts";
import { SqliteReadThreads } from "./read-threads.ts";
import { StatementCache } from "./statement-cache.ts";

export interface SqliteSearchEngineOptions {
  /** Close the database on close(); false when the catalog or the event bus shares the connection. */
  ownsDatabase?: boolean;
  /** The approximate kNN index over large bases' chunk vectors (approximate-knn.ts); hnsw above 20,000 vectors unless set. */
  vectorIndex?: ApproximateKnnOptions;
  /**
   * Threads that answer the reads (search, chunks, finds) on read-only connections of their own
   * (read-threads.ts); 0 or unset reads on this connection. A file's only: an in-memory database
   * has no second connection.
   */
  readThreads?: number;
  /** "reader" on a read thread's read-only connection: its vector indexes only load the writer's saves. */
  role?: ApproximateKnnRole;
}

interface SpaceRow {
  knowledge_base_id: string;
  dimension: number;
  vector_table: string;
}

/** A base's registry row: its live vectors and its keyword table. */
interface SearchSpaceRow extends SpaceRow {
  keyword_table: string;
}

interface ChunkRow {
  rowid: number;
  id: string;
  knowledge_base_id: string;
  document_id: string;
  file_name: string;
  chunk_index: number;
  text: string;
  token_count: number;
  page: number;
  page_end: number;
  section_path: string;
  start_offset: number;
  end_offset: number;
  enabled: number;
  parent: string | null;
  revision: string | null;
  disabled: number;
}

/** Chunks read per statement when finding text. */
const FIND_PAGE_SIZE = 1_000;

// sqlite-vec refuses k above this in one kNN query.
const MAX_KNN_K = 4096;

export class SqliteSearchEngine implements SearchEngine {
  private closed = false;
  private readonly ann: ApproximateKnn;
  /** This connection's statements and table-existence answers, kept across calls (statement-cache.ts). */
  private readonly statements: StatementCache;
  private readonly readers: SqliteReadThreads | undefined;
  /** Whether the indexes the readers load have been saved since this writer opened the file. */
  private readersPrepared = false;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly options: SqliteSearchEngineOptions = {},
  ) {
    const vectorIndex = options.vectorIndex ?? DEFAULT_APPROXIMATE_KNN;
    this.statements = new StatementCache(db);
    this.ann = new ApproximateKnn(db, vectorIndex, options.role ?? "writer", this.statements);
    const threads = options.readThreads ?? 0;
    this.readers = threads > 0 && !db.memory && db.name ? new SqliteReadThreads({ file: db.name, vectorIndex, threads }) : undefined;
  }

  async ensureKnowledgeBase(knowledgeBaseId: string, embeddingDimension: number): Promise<void> {
    if (!knowledgeBaseId) throw new InvalidInputError("a knowledge base id is required");
    if (!Number.isInteger(embeddingDimension) || embeddingDimension <= 0) {
      throw new InvalidInputError(`embedding dimension must be a positive integer, got ${embeddingDimension}`);
    }
    this.run("ensure knowledge base", () =>
      this.transaction(() => {
          const space = this.findSpace(knowledgeBaseId);
          if (space) {
            if (space.dimension !== embeddingDimension) {
              throw new FailedPreconditionError(
                `knowledge base ${knowledgeBaseId} stores ${space.dimension}-dimensional vectors, not ${embeddingDimension}`,
              );
            }
            return;
          }
          const table = vectorTableName(knowledgeBaseId);
          const keywordTable = keywordTableName(knowledgeBaseId);
          this.createVectorTables(table, embeddingDimension);
          createKeywordTable(this.db, keywordTable);
          this.statements.refresh();
          this.statements
            .prepare(`INSERT INTO search_spaces (knowledge_base_id, dimension, vector_table, keyword_table) VALUES (?, ?, ?, ?)`)
            .run(knowledgeBaseId, embeddingDimension, table, keywordTable);
        })
        .immediate(),
    );
  }

  async dropKnowledgeBase(knowledgeBaseId: string): Promise<void> {
    this.run("drop knowledge base", () =>
      this.transaction(() => {
          const space = this.findSpace(knowledgeBaseId);
          if (!space) return;
          this.db.exec(`DROP TABLE IF EXISTS "${space.keyword_table}"`);
          this.statements.refresh();
          this.statements.prepare(`DELETE FROM chunks WHERE knowledge_base_id = ?`).run(knowledgeBaseId);
          this.statements.prepare(`DELETE FROM search_documents WHERE knowledge_base_id = ?`).run(knowledgeBaseId);
          this.statements.prepare(`DELETE FROM search_spaces WHERE knowledge_base_id = ?`).run(knowledgeBaseId);
          this.dropVectorTables(space.vector_table);
          this.dropShadowTable(knowledgeBaseId);
        })
        .immediate(),
    );
  }

  async replaceDocumentChunks(knowledgeBaseId: string, documentId: string, fileName: string, chunks: EmbeddedChunk[], documentVector?: Float32Array): Promise<void> {
    const seen = uniqueChunkIds(chunks);
    this.run("replace document chunks", () =>
      this.transaction(() => {
          const space = this.requireSpace(knowledgeBaseId);
          // Checked before any write, so a bad batch leaves the old chunks untouched.
          checkDimensions(knowledgeBaseId, space.dimension, documentId, chunks, documentVector);
          const enabled = this.documentEnabled(knowledgeBaseId, documentId);
          // The document's old chunks, plus any row already holding one of the new ids (stable ids
          // are upserts, as in OpenSearch).
          const stale = this.statements
            .prepare(
              `SELECT rowid, knowledge_base_id FROM chunks
               WHERE (knowledge_base_id = ? AND document_id = ?) OR id IN (SELECT value FROM json_each(?))`,
            )
            .all(knowledgeBaseId, documentId, JSON.stringify([...seen])) as { rowid: number; knowledge_base_id: string }[];
          this.deleteChunkRows(stale);
          this.insertDocumentRows(space, knowledgeBaseId, { documentId, fileName, enabled, chunks, documentVector });
        })
        .immediate(),
    );
    this.afterWrite();
  }

  async importDocuments(knowledgeBaseId: string, documents: ImportedDocumentChunks[]): Promise<void> {
    this.run("import documents", () =>
      this.transaction(() => {
          const space = this.requireSpace(knowledgeBaseId);
          for (const d of documents) checkDimensions(knowledgeBaseId, space.dimension, d.documentId, d.chunks, d.documentVector);
          for (const document of documents) this.insertDocumentRows(space, knowledgeBaseId, document);
        })
        .immediate(),
    );
  }

  /** Every write is visible at its commit here. */
  async finishImport(): Promise<void> {}

  async deleteDocument(knowledgeBaseId: string, documentId: string): Promise<void> {
    this.run("delete document", () =>
      this.transaction(() => {
          const rows = this.statements
            .prepare(`SELECT rowid, knowledge_base_id FROM chunks WHERE knowledge_base_id = ? AND document_id = ?`)
            .all(knowledgeBaseId, documentId) as { rowid: number; knowledge_base_id: string }[];
          this.deleteChunkRows(rows);
          this.statements.prepare(`DELETE FROM search_documents WHERE knowledge_base_id = ? AND document_id = ?`).run(knowledgeBaseId, documentId);
        })
        .immediate(),
    );
    this.afterWrite();
  }

  async setDocumentEnabled(knowledgeBaseId: string, documentId: string, enabled: boolean): Promise<void> {
    this.run("set document enabled", () =>
      this.transaction(() => {
          const space = this.requireSpace(knowledgeBaseId);
          const flag = enabled ? 1 : 0;
          // Remembered even before the document has chunks, so chunks indexed later inherit it.
          this.statements
            .prepare(
              `INSERT INTO search_documents (knowledge_base_id, document_id, enabled) VALUES (?, ?, ?)
               ON CONFLICT (knowledge_base_id, document_id) DO UPDATE SET enabled = excluded.enabled`,
            )
            .run(knowledgeBaseId, documentId, flag);
          // A chunk disabled by hand stays out of search whatever its document's flag.
          const rows = this.statements
            .prepare(`SELECT rowid FROM chunks WHERE knowledge_base_id = ? AND document_id = ? AND enabled != ? * (1 - disabled)`)
            .all(knowledgeBaseId, documentId, flag) as { rowid: number }[];
          this.statements.prepare(`UPDATE chunks SET enabled = ? * (1 - disabled) WHERE knowledge_base_id = ? AND document_id = ?`).run(flag, knowledgeBaseId, documentId);
          const read = this.statements.prepare(`SELECT enabled FROM chunks WHERE rowid = ?`);
          for (const { rowid } of rows) this.setVectorFlags(knowledgeBaseId, rowid, (read.get(rowid) as { enabled: number }).enabled);
        })
        .immediate(),
    );
    this.afterWrite();
  }

  async putChunk(knowledgeBaseId: string, documentId: string, fileName: string, chunk: EmbeddedChunk): Promise<void> {
    this.run("put chunk", () =>
      this.transaction(() => {
          const space = this.requireSpace(knowledgeBaseId);
          if (chunk.vector.length !== space.dimension) {
            throw new FailedPreconditionError(`chunk ${chunk.id} has a ${chunk.vector.length}-dimensional vector; knowledge base ${knowledgeBaseId} stores ${space.dimension}`);
          }
          const enabled = this.documentEnabled(knowledgeBaseId, documentId) && !chunk.disabled;
          const stored = this.statements
            .prepare(`SELECT rowid, text, section_path FROM chunks WHERE id = ? AND knowledge_base_id = ? AND document_id = ?`)
            .get(chunk.id, knowledgeBaseId, documentId) as { rowid: number; text: string; section_path: string } | undefined;
          if (!stored) {
            this.insertChunkRow(space, knowledgeBaseId, documentId, fileName, this.documentEnabled(knowledgeBaseId, documentId), chunk);
            return;
          }
          // Updated in place, so the rowid (and the document vector keyed by it) stays.
          this.statements
            .prepare(
              `UPDATE chunks SET chunk_index = ?, text = ?, token_count = ?, page = ?, page_end = ?, section_path = ?, start_offset = ?, end_offset = ?,
                 enabled = ?, parent = ?, revision = ?, disabled = ? WHERE rowid = ?`,
            )
            .run(...chunkColumns(chunk).place, enabled ? 1 : 0, ...chunkColumns(chunk).marks, stored.rowid);
          // Out with the terms it was written with, so FTS5's totals shrink as they grew (space-tables.ts).
          this.statements.prepare(deleteKeywordRowSql(space.keyword_table)).run(stored.rowid, keywordTerms(stored.text, JSON.parse(stored.section_path) as string[]));
          this.statements.prepare(`INSERT INTO "${space.keyword_table}" (rowid, terms) VALUES (?, ?)`).run(stored.rowid, keywordTerms(chunk.text, chunk.sectionPath));
          this.statements.prepare(`DELETE FROM "${space.vector_table}" WHERE rowid = ?`).run(BigInt(stored.rowid));
          this.statements
            .prepare(`INSERT INTO "${space.vector_table}" (rowid, embedding, document_id, enabled) VALUES (?, ?, ?, ?)`)
            .run(BigInt(stored.rowid), vectorBlob(chunk.vector), documentId, enabled ? 1n : 0n);
          this.ann.recordChange(space.vector_table, stored.rowid);
          // The shadow's vector was of the old text: the running change of model embeds it again.
          const shadow = this.findShadow(knowledgeBaseId);
          if (shadow) {
            this.statements.prepare(`DELETE FROM "${shadow.vector_table}" WHERE rowid = ?`).run(BigInt(stored.rowid));
            this.ann.recordChange(shadow.vector_table, stored.rowid);
          }
        })
        .immediate(),
    );
    this.afterWrite();
  }

  async setChunkDisabled(knowledgeBaseId: string, chunkId: string, disabled: boolean): Promise<void> {
    this.run("set chunk disabled", () =>
      this.transaction(() => {
          this.requireSpace(knowledgeBaseId);
          const row = this.statements.prepare(`SELECT rowid, document_id FROM chunks WHERE id = ? AND knowledge_base_id = ?`).get(chunkId, knowledgeBaseId) as
            | { rowid: number; document_id: string }
            | undefined;
          if (!row) throw new NotFoundError(`no chunk ${chunkId} in knowledge base ${knowledgeBaseId}`);
          const enabled = this.documentEnabled(knowledgeBaseId, row.document_id) && !disabled ? 1 : 0;
          this.statements.prepare(`UPDATE chunks SET disabled = ?, enabled = ? WHERE rowid = ?`).run(disabled ? 1 : 0, enabled, row.rowid);
          this.setVectorFlags(knowledgeBaseId, row.rowid, enabled);
        })
        .immediate(),
    );
    this.afterWrite();
  }

  async search(query: SearchQuery, options: SearchCallOptions = {}): Promise<SearchHit[]> {
    if (this.readers) return this.onReaders("search", (readers) => readers.read<SearchHit[]>({ method: "search", query }, options.signal));
    // On this thread a search runs at once and to its end (better-sqlite3 is synchronous): one whose
    // caller left while it waited its turn behind other calls is not started.
    throwIfCancelled(options.signal, "search");
    return hybridSearch(query, {
      dimensions: (knowledgeBaseIds) =>
        this.run("search", () => knowledgeBaseIds.map((id) => this.requireSpace(id)).map((space) => ({ knowledgeBaseId: space.knowledge_base_id, dimension: space.dimension }))),
      // One read transaction: both lists see the same snapshot even while a writer replaces chunks.
      lists: (request) =>
        this.run("search", () =>
          this.transaction(() => {
            const spaces = query.knowledgeBaseIds.map((id) => this.requireSpace(id));
            return {
              bm25: request.bm25 && this.bm25Hits(spaces, query, request.bm25.limit),
              vector: request.vector && this.vectorHits(spaces, (space) => space.vector_table, request.vector.vector, query, request.vector.limit),
              documentVector:
                request.documentVector && this.vectorHits(spaces, (space) => documentTableName(space.vector_table), request.documentVector.vector, query, request.documentVector.limit),
            };
          })(),
        ),
    });
  }

  async getChunks(ids: string[]): Promise<Chunk[]> {
    if (ids.length === 0) return [];
    if (this.readers) return this.onReaders("get chunks", (readers) => readers.read<Chunk[]>({ method: "getChunks", ids }));
    return this.run("get chunks", () => {
      const rows = this.statements.prepare(`SELECT * FROM chunks WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as ChunkRow[];
      const byId = new Map(rows.map((row) => [row.id, toChunk(row)]));
      return ids.flatMap((id) => byId.get(id) ?? []);
    });
  }

  async getChunksAt(positions: ChunkPosition[]): Promise<Chunk[]> {
    if (positions.length === 0) return [];
    if (this.readers) return this.onReaders("get chunks at positions", (readers) => readers.read<Chunk[]>({ method: "getChunksAt", positions }));
    return this.run("get chunks at positions", () => {
      const rows = this.statements
        .prepare(
          // The positions drive the loop (CROSS JOIN keeps them outer), each a look-up in chunks_by_document.
          `SELECT c.* FROM json_each(?) p CROSS JOIN chunks c
             ON c.knowledge_base_id = json_extract(p.value, '$.knowledgeBaseId')
            AND c.document_id = json_extract(p.value, '$.documentId')
            AND c.chunk_index = json_extract(p.value, '$.index')`,
        )
        .all(JSON.stringify(positions)) as ChunkRow[];
      return orderByPosition(positions, rows.map(toChunk));
    });
  }

  async findChunks(request: ChunkFindRequest): Promise<ChunkFind> {
    if (this.readers) return this.onReaders("find chunks", (readers) => readers.read<ChunkFind>({ method: "findChunks", request }));
    validateChunkFind(request);
    this.run("find chunks", () => request.knowledgeBaseIds.forEach((id) => this.requireSpace(id)));
    return findInPages(this.chunkPages(request), request);
  }

  /**
   * The bases' chunks in pages by (document, position), base by base, each page its own statement
   * walking chunks_by_document from where the last one ended (an open iterator would hold the
   * connection busy across the awaits between pages; an offset or a rowid order would re-read or
   * re-sort the base on every page).
   */
  private *chunkPages(request: ChunkFindRequest): Generator<ScannedChunk[]> {
    const page = this.run("find chunks", () =>
      this.statements.prepare(
        `SELECT * FROM chunks
         WHERE knowledge_base_id = @knowledgeBase AND (document_id, chunk_index) > (@document, @index)
           AND (@documents IS NULL OR document_id IN (SELECT value FROM json_each(@documents)))
         ORDER BY document_id, chunk_index LIMIT @size`,
      ),
    );
    const documents = request.documentIds.length > 0 ? JSON.stringify(request.documentIds) : null;
    for (const knowledgeBase of request.knowledgeBaseIds) {
      let document = "";
      let index = -1;
      for (;;) {
        const rows = this.run("find chunks", () => page.all({ knowledgeBase, document, index, documents, size: FIND_PAGE_SIZE }) as ChunkRow[]);
        if (rows.length === 0) break;
        yield rows.map((row) => ({ chunk: toChunk(row), fileName: row.file_name, enabled: row.enabled === 1 }));
        ({ document_id: document, chunk_index: index } = rows[rows.length - 1]);
      }
    }
  }

  async documentChunks(knowledgeBaseId: string, documentId: string): Promise<Chunk[]> {
    return this.run("document chunks", () =>
      (this.statements.prepare(`SELECT * FROM chunks WHERE knowledge_base_id = ? AND document_id = ? ORDER BY chunk_index`).all(knowledgeBaseId, documentId) as ChunkRow[]).map(toChunk),
    );
  }

  async documentWithVectors(knowledgeBaseId: string, documentId: string): Promise<StoredDocumentChunks> {
    return this.run("document with vectors", () => {
      const space = this.requireSpace(knowledgeBaseId);
      const rows = this.statements.prepare(`SELECT * FROM chunks WHERE knowledge_base_id = ? AND document_id = ? ORDER BY chunk_index`).all(knowledgeBaseId, documentId) as ChunkRow[];
      const vectorOf = this.statements.prepare(`SELECT embedding FROM "${space.vector_table}" WHERE rowid = ?`);
      const documentTable = documentTableName(space.vector_table);
      const documentVectorOf = this.tableExists(documentTable) ? this.statements.prepare(`SELECT embedding FROM "${documentTable}" WHERE rowid = ?`) : undefined;
      const chunks: EmbeddedChunk[] = [];
      let documentVector: Float32Array | undefined;
      for (const row of rows) {
        const stored = vectorOf.get(BigInt(row.rowid)) as { embedding: Buffer } | undefined;
        if (!stored) throw new FailedPreconditionError(`chunk ${row.id} of document ${documentId} has no vector`);
        chunks.push({ ...toChunk(row), vector: blobVector(stored.embedding) });
        const whole = documentVectorOf?.get(BigInt(row.rowid)) as { embedding: Buffer } | undefined;
        if (whole) documentVector = blobVector(whole.embedding);
      }
      return { chunks, ...(documentVector ? { documentVector } : {}) };
    });
  }

  async hasDocumentVector(knowledgeBaseId: string, documentId: string): Promise<boolean> {
    return this.run("has document vector", () => {
      const space = this.requireSpace(knowledgeBaseId);
      const table = documentTableName(space.vector_table);
      if (!this.tableExists(table)) return false;
      // Point look-ups by the chunk rowids, not a WHERE on the metadata column, which vec0 would scan.
      const find = this.statements.prepare(`SELECT 1 FROM "${table}" WHERE rowid = ?`);
      const rows = this.statements.prepare(`SELECT rowid FROM chunks WHERE knowledge_base_id = ? AND document_id = ?`).all(knowledgeBaseId, documentId) as { rowid: number }[];
      return rows.some(({ rowid }) => find.get(BigInt(rowid)) !== undefined);
    });
  }

  async beginShadow(knowledgeBaseId: string, dimension: number): Promise<void> {
    if (!Number.isInteger(dimension) || dimension <= 0) throw new InvalidInputError(`embedding dimension must be a positive integer, got ${dimension}`);
    this.run("begin shadow", () =>
      this.transaction(() => {
          const space = this.requireSpace(knowledgeBaseId);
          this.dropShadowTable(knowledgeBaseId);
          // A fresh name each time: the live table keeps its name until the swap drops it.
          const table = `${space.vector_table.replace(/_g\d+$/, "")}_g${Date.now()}`;
          this.createVectorTables(table, dimension);
          this.statements.prepare(`INSERT INTO search_space_shadows (knowledge_base_id, dimension, vector_table) VALUES (?, ?, ?)`).run(knowledgeBaseId, dimension, table);
        })
        .immediate(),
    );
  }

  async writeShadowChunks(knowledgeBaseId: string, documentId: string, _fileName: string, chunks: EmbeddedChunk[], documentVector?: Float32Array): Promise<void> {
    this.run("write shadow chunks", () =>
      this.transaction(() => {
          const shadow = this.findShadow(knowledgeBaseId);
          if (!shadow) throw new FailedPreconditionError(`knowledge base ${knowledgeBaseId} has no change of model in progress`);
          for (const chunk of chunks) {
            if (chunk.vector.length !== shadow.dimension) {
              throw new FailedPreconditionError(`chunk ${chunk.id} has a ${chunk.vector.length}-dimensional vector; the new model's are ${shadow.dimension}`);
            }
          }
          if (documentVector && documentVector.length !== shadow.dimension) {
            throw new FailedPreconditionError(`document ${documentId} has a ${documentVector.length}-dimensional document vector; the new model's are ${shadow.dimension}`);
          }
          const documentTable = documentTableName(shadow.vector_table);
          if (chunks.length === 0) {
            // No chunks: the document leaves the shadow. Shadow rows share the live chunks' rowids, so a
            // document deleted live has none left; one still live is pending again.
            const rows = this.statements.prepare(`SELECT rowid FROM chunks WHERE knowledge_base_id = ? AND document_id = ?`).all(knowledgeBaseId, documentId) as { rowid: number }[];
            for (const row of rows) {
              this.statements.prepare(`DELETE FROM "${shadow.vector_table}" WHERE rowid = ?`).run(BigInt(row.rowid));
              this.statements.prepare(`DELETE FROM "${documentTable}" WHERE rowid = ?`).run(BigInt(row.rowid));
              this.ann.recordChange(shadow.vector_table, row.rowid);
            }
            return;
          }
          const live = this.statements.prepare(`SELECT rowid, enabled FROM chunks WHERE id = ? AND knowledge_base_id = ? AND document_id = ?`);
          const remove = this.statements.prepare(`DELETE FROM "${shadow.vector_table}" WHERE rowid = ?`);
          const insert = this.statements.prepare(`INSERT INTO "${shadow.vector_table}" (rowid, embedding, document_id, enabled) VALUES (?, ?, ?, ?)`);
          let first: { index: number; rowid: number; enabled: number } | undefined;
          for (const chunk of chunks) {
            const row = live.get(chunk.id, knowledgeBaseId, documentId) as { rowid: number; enabled: number } | undefined;
            if (!row) continue;
            remove.run(BigInt(row.rowid));
            insert.run(BigInt(row.rowid), vectorBlob(chunk.vector), documentId, BigInt(row.enabled));
            this.ann.recordChange(shadow.vector_table, row.rowid);
            this.statements.prepare(`DELETE FROM "${documentTable}" WHERE rowid = ?`).run(BigInt(row.rowid));
            if (!first || chunk.index < first.index) first = { index: chunk.index, ...row };
          }
          if (documentVector && first) {
            this.statements
              .prepare(`INSERT INTO "${documentTable}" (rowid, embedding, document_id, enabled) VALUES (?, ?, ?, ?)`)
              .run(BigInt(first.rowid), vectorBlob(documentVector), documentId, BigInt(first.enabled));
          }
        })
        .immediate(),
    );
    this.afterWrite();
  }

  async shadowPendingDocuments(knowledgeBaseId: string): Promise<string[]> {
    return this.run("shadow pending documents", () => {
      const shadow = this.findShadow(knowledgeBaseId);
      if (!shadow) throw new FailedPreconditionError(`knowledge base ${knowledgeBaseId} has no change of model in progress`);
      const rows = this.statements
        .prepare(
          `SELECT DISTINCT document_id FROM chunks c
           WHERE c.knowledge_base_id = ? AND NOT EXISTS (SELECT 1 FROM "${shadow.vector_table}" s WHERE s.rowid = c.rowid)
           ORDER BY document_id`,
        )
        .all(knowledgeBaseId) as { document_id: string }[];
      return rows.map((row) => row.document_id);
    });
  }

  async commitShadow(knowledgeBaseId: string): Promise<void> {
    this.run("commit shadow", () =>
      this.transaction(() => {
          const space = this.requireSpace(knowledgeBaseId);
          const shadow = this.findShadow(knowledgeBaseId);
          if (!shadow) throw new FailedPreconditionError(`knowledge base ${knowledgeBaseId} has no change of model in progress`);
          this.statements.prepare(`UPDATE search_spaces SET dimension = ?, vector_table = ? WHERE knowledge_base_id = ?`).run(shadow.dimension, shadow.vector_table, knowledgeBaseId);
          this.statements.prepare(`DELETE FROM search_space_shadows WHERE knowledge_base_id = ?`).run(knowledgeBaseId);
          this.dropVectorTables(space.vector_table);
        })
        .immediate(),
    );
    this.afterWrite();
  }

  async dropShadow(knowledgeBaseId: string): Promise<void> {
    this.run("drop shadow", () => this.transaction(() => this.dropShadowTable(knowledgeBaseId)).immediate());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.readers?.close();
    // Saved on the way out so the next start loads the indexes instead of replaying their changes.
    if (this.db.open) withDatabase(this.db, "save the vector indexes", () => this.ann.checkpoint({ buildMissing: false }));
    this.ann.close();
    if (this.options.ownsDatabase && this.db.open) this.db.close();
  }

  /**
   * Lets the vector indexes take in what a committed write changed, and save every so often. A
   * failed save loses nothing (SQLite holds the rows; the log holds the changes), so it does not
   * fail the write: the next write tries again.
   */
  private afterWrite(): void {
    try {
      withDatabase(this.db, "update the vector indexes", () => this.ann.afterWrite());
    } catch {
      // Retried on the next write; a search catches the index up regardless.
    }
  }

  /**
   * A read sent to the read threads. Before the first, the indexes of the large bases are built and
   * saved here (the writer's job, once; later saves follow the writes), since a reader only loads
   * saved indexes and would scan exactly until one exists.
   */
  private onReaders<T>(what: string, read: (readers: SqliteReadThreads) => Promise<T>): Promise<T> {
    if (this.closed) throw new UnavailableError(`${what}: the search engine is closed`);
    if (!this.readersPrepared) {
      this.readersPrepared = true;
      withDatabase(this.db, "save the vector indexes", () => this.ann.checkpoint({ buildMissing: true }));
    }
    return read(this.readers!);
  }

  private run<T>(what: string, fn: () => T): T {
    if (this.closed) throw new UnavailableError(`${what}: the search engine is closed`);
    return withDatabase(this.db, what, fn);
  }

  private findSpace(knowledgeBaseId: string): SearchSpaceRow | undefined {
    return this.statements.prepare(`SELECT * FROM search_spaces WHERE knowledge_base_id = ?`).get(knowledgeBaseId) as SearchSpaceRow | undefined;
  }

  private findShadow(knowledgeBaseId: string): SpaceRow | undefined {
    return this.statements.prepare(`SELECT * FROM search_space_shadows WHERE knowledge_base_id = ?`).get(knowledgeBaseId) as SpaceRow | undefined;
  }

  private dropShadowTable(knowledgeBaseId: string): void {
    const shadow = this.findShadow(knowledgeBaseId);
    if (!shadow) return;
    this.dropVectorTables(shadow.vector_table);
    this.statements.prepare(`DELETE FROM search_space_shadows WHERE knowledge_base_id = ?`).run(knowledgeBaseId);
  }

  /**
   * A base's chunk-vector table and its document-vector table; the document table is created with
   * the base (or with its first document vector, for bases made before document vectors).
   */
  private createVectorTables(table: string, dimension: number): void {
    // Metadata columns are filtered inside the kNN scan, so filters never starve the top k.
    for (const name of [table, documentTableName(table)]) {
      this.db.exec(
        `CREATE VIRTUAL TABLE IF NOT EXISTS "${name}" USING vec0(
           embedding float[${dimension}] distance_metric=cosine,
           document_id text,
           enabled integer
         )`,
      );
    }
    this.statements.refresh();
  }

  private dropVectorTables(table: string): void {
    this.ann.dropTable(table);
    this.db.exec(`DROP TABLE IF EXISTS "${table}"`);
    this.db.exec(`DROP TABLE IF EXISTS "${documentTableName(table)}"`);
    this.statements.refresh();
  }

  /** Every existing vec0 table keyed by the base's chunk rowids: live and shadow, chunks and documents. */
  private vectorTablesOf(knowledgeBaseId: string): string[] {
    const tables = [this.findSpace(knowledgeBaseId)?.vector_table, this.findShadow(knowledgeBaseId)?.vector_table].filter((t): t is string => !!t);
    return tables.flatMap((table) => [table, documentTableName(table)]).filter((table) => this.tableExists(table));
  }

  private tableExists(name: string): boolean {
    return this.statements.tableExists(name);
  }

  /**
   * A transaction of this connection whose first statement reads the schema cookie, so the kept
   * existence answers are those of the transaction's own snapshot.
   */
  private transaction<T>(fn: () => T) {
    return this.db.transaction((): T => {
      this.statements.refresh();
      return fn();
    });
  }

  private requireSpace(knowledgeBaseId: string): SearchSpaceRow {
    const space = this.findSpace(knowledgeBaseId);
    if (!space) throw new NotFoundError(`knowledge base ${knowledgeBaseId} has no search index`);
    return space;
  }

  private documentEnabled(knowledgeBaseId: string, documentId: string): boolean {
    const row = this.statements
      .prepare(`SELECT enabled FROM search_documents WHERE knowledge_base_id = ? AND document_id = ?`)
      .get(knowledgeBaseId, documentId) as { enabled: number } | undefined;
    return row ? row.enabled === 1 : true;
  }

  /** A document's flag row, its chunk rows and its document vector (stored on its first chunk's rowid). */
  private insertDocumentRows(space: SearchSpaceRow, knowledgeBaseId: string, { documentId, fileName, enabled, chunks, documentVector }: ImportedDocumentChunks): void {
    this.statements
      .prepare(
        `INSERT INTO search_documents (knowledge_base_id, document_id, enabled) VALUES (?, ?, ?)
         ON CONFLICT (knowledge_base_id, document_id) DO NOTHING`,
      )
      .run(knowledgeBaseId, documentId, enabled ? 1 : 0);
    let first: { index: number; rowid: number | bigint; enabled: boolean } | undefined;
    for (const chunk of chunks) {
      const row = this.insertChunkRow(space, knowledgeBaseId, documentId, fileName, enabled, chunk);
      if (!first || chunk.index < first.index) first = { index: chunk.index, ...row };
    }
    if (documentVector && first) {
      this.createVectorTables(space.vector_table, space.dimension);
      // The first chunk's flag: a document vector is stored on, and searched with, that chunk.
      this.statements
        .prepare(`INSERT INTO "${documentTableName(space.vector_table)}" (rowid, embedding, document_id, enabled) VALUES (?, ?, ?, ?)`)
        .run(BigInt(first.rowid), vectorBlob(documentVector), documentId, first.enabled ? 1n : 0n);
    }
  }

  /** Inserts a chunk's row, its keyword terms and its vector; its flag is the document's unless the chunk is disabled. */
  private insertChunkRow(space: SearchSpaceRow, knowledgeBaseId: string, documentId: string, fileName: string, documentEnabled: boolean, chunk: EmbeddedChunk) {
    const enabled = documentEnabled && !chunk.disabled;
    const { lastInsertRowid } = this.statements
      .prepare(
        `INSERT INTO chunks (id, knowledge_base_id, document_id, file_name, chunk_index, text, token_count, page, page_end,
           section_path, start_offset, end_offset, enabled, parent, revision, disabled)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(chunk.id, knowledgeBaseId, documentId, fileName, ...chunkColumns(chunk).place, enabled ? 1 : 0, ...chunkColumns(chunk).marks);
    this.statements.prepare(`INSERT INTO "${space.keyword_table}" (rowid, terms) VALUES (?, ?)`).run(lastInsertRowid, keywordTerms(chunk.text, chunk.sectionPath));
    // vec0 only accepts integer-typed keys and metadata, which better-sqlite3 sends for BigInt.
    this.statements
      .prepare(`INSERT INTO "${space.vector_table}" (rowid, embedding, document_id, enabled) VALUES (?, ?, ?, ?)`)
      .run(BigInt(lastInsertRowid), vectorBlob(chunk.vector), documentId, enabled ? 1n : 0n);
    this.ann.recordChange(space.vector_table, lastInsertRowid);
    return { rowid: lastInsertRowid, enabled };
  }

  /** A chunk's search flag in every vector table keyed by its rowid (a point update: vec0 would scan for a WHERE on metadata). */
  private setVectorFlags(knowledgeBaseId: string, rowid: number, enabled: number): void {
    for (const table of this.vectorTablesOf(knowledgeBaseId)) {
      this.statements.prepare(`UPDATE "${table}" SET enabled = ? WHERE rowid = ?`).run(BigInt(enabled), BigInt(rowid));
      if (!isDocumentTable(table)) this.ann.recordChange(table, rowid);
    }
  }

  private deleteChunkRows(rows: { rowid: number; knowledge_base_id: string }[]): void {
    if (rows.length === 0) return;
    const readChunk = this.statements.prepare(`SELECT text, section_path FROM chunks WHERE rowid = ?`);
    const deleteChunk = this.statements.prepare(`DELETE FROM chunks WHERE rowid = ?`);
    // Each row's base's keyword table and vector tables, the shadow's too: rowids are reused, and a
    // reused one must not find old terms or an old vector.
    const baseDeletes = new Map<string, { terms?: { run(rowid: number, terms: string): unknown }; vectors: ReturnType<SqliteDatabase["prepare"]>[]; chunkTables: string[] }>();
    for (const row of rows) {
      let deletes = baseDeletes.get(row.knowledge_base_id);
      if (!deletes) {
        const keywordTable = this.findSpace(row.knowledge_base_id)?.keyword_table;
        const tables = this.vectorTablesOf(row.knowledge_base_id);
        deletes = {
          terms: keywordTable ? this.statements.prepare<[number, string]>(deleteKeywordRowSql(keywordTable)) : undefined,
          vectors: tables.map((table) => this.statements.prepare(`DELETE FROM "${table}" WHERE rowid = ?`)),
          chunkTables: tables.filter((table) => !isDocumentTable(table)),
        };
        baseDeletes.set(row.knowledge_base_id, deletes);
      }
      for (const deleteVector of deletes.vectors) deleteVector.run(BigInt(row.rowid));
      for (const table of deletes.chunkTables) this.ann.recordChange(table, row.rowid);
      // The terms the row was written with, so FTS5 takes them out of its totals too.
      const stored = readChunk.get(row.rowid) as { text: string; section_path: string } | undefined;
      if (stored) deletes.terms?.run(row.rowid, keywordTerms(stored.text, JSON.parse(stored.section_path) as string[]));
      deleteChunk.run(row.rowid);
    }
  }

  /**
   * BM25 over each base's own keyword table, scored by that base's statistics, merged by score as
   * OpenSearch merges a search over several indexes.
   */
  private bm25Hits(spaces: SearchSpaceRow[], query: SearchQuery, limit: number): EngineHit[] {
    // The question is weighed against the average chunk of the bases searched together (query-terms.ts).
    const groups = weightedQueryTerms(query.text, averageRowLength(spaces.map((space) => keywordIndexSize(this.statements, space.keyword_table))));
    if (groups.length === 0) return [];
    const parameters = { ...bm25Parameters(groups), documents: query.documentIds.length > 0 ? JSON.stringify(query.documentIds) : null, limit };
    const hits = spaces.flatMap((space) =>
      (this.statements.prepare(bm25Sql(space.keyword_table, groups.length)).all(parameters) as (ChunkRow & { score: number })[]).map((row) => ({
        chunk: toChunk(row),
        fileName: row.file_name,
        score: row.score,
      })),
    );
    return hits.sort(byScoreThenId).slice(0, limit);
  }

  /** kNN over each base's table of the kind tableOf names (a base without one contributes nothing). */
  private vectorHits(spaces: SpaceRow[], tableOf: (space: SpaceRow) => string, vector: Float32Array, query: SearchQuery, limit: number): EngineHit[] {
    const k = Math.min(limit, MAX_KNN_K);
    const blob = vectorBlob(vector);
    const documents = query.documentIds.length > 0 ? JSON.stringify(query.documentIds) : null;
    const loadChunks = this.statements.prepare(CHUNKS_BY_ROWID_SQL);
    const hits: EngineHit[] = [];
    for (const space of spaces) {
      const table = tableOf(space);
      if (table !== space.vector_table && !this.tableExists(table)) continue;
      // Document vectors (one a document) stay on the exact scan; chunk vectors may have an index.
      const neighbours =
        (table === space.vector_table ? this.approximateNeighbours(space, vector, k, query.documentIds) : undefined) ??
        (this.statements.prepare(knnSql(table, documents !== null)).all(...[blob, BigInt(k), ...(documents ? [documents] : [])]) as Neighbour[]);
      if (neighbours.length === 0) continue;
      const rows = loadChunks.all(JSON.stringify(neighbours.map((n) => n.rowid))) as ChunkRow[];
      const byRowid = new Map(rows.map((row) => [row.rowid, row]));
      for (const { rowid, distance } of neighbours) {
        const row = byRowid.get(rowid);
        if (row) hits.push({ chunk: toChunk(row), fileName: row.file_name, score: 1 - distance });
      }
    }
    // Each knowledge base answered its own top k; the merged list keeps the best k overall.
    hits.sort(byScoreThenId);
    return hits.slice(0, k);
  }

  /**
   * A base's k nearest enabled chunks from its approximate index, the document filter applied by
   * over-fetching (chooseKnnPlan says how far); undefined when the exact scan should answer instead:
   * the index is off, the base is small, the filter is very selective, or the filtered answer came
   * up short of what the filter allows.
   */
  private approximateNeighbours(space: SpaceRow, vector: Float32Array, k: number, documentIds: readonly string[]): Neighbour[] | undefined {
    if (!this.ann.enabled) return undefined;
    const table = space.vector_table;
    const rows = this.ann.enabledRows(table);
    const filtered =
      documentIds.length > 0
        ? (
            this.statements
              .prepare(`SELECT count(*) AS n FROM chunks WHERE knowledge_base_id = ? AND enabled = 1 AND document_id IN (SELECT value FROM json_each(?))`)
              .get(space.knowledge_base_id, JSON.stringify(documentIds)) as { n: number }
          ).n
        : undefined;
    const plan = chooseKnnPlan(k, rows, filtered, this.ann.options.exactBelow);
    if (plan.kind === "exact") return undefined;
    let found = this.ann.nearest(table, vector, plan.fetch);
    if (filtered !== undefined) {
      const kept = new Set(
        (
          this.statements
            .prepare(`SELECT rowid FROM chunks WHERE rowid IN (SELECT value FROM json_each(?)) AND document_id IN (SELECT value FROM json_each(?))`)
            .all(JSON.stringify(found.map((n) => n.rowid)), JSON.stringify(documentIds)) as { rowid: number }[]
        ).map((row) => row.rowid),
      );
      found = found.filter((n) => kept.has(n.rowid));
    }
    if (found.length < Math.min(k, filtered ?? rows)) return undefined;
    return found.slice(0, k);
  }
}

function byScoreThenId(a: EngineHit, b: EngineHit): number {
  return b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : a.chunk.id > b.chunk.id ? 1 : 0);
}

// The statements behind the lists (bm25Sql in space-tables.ts), exported so bench/ replays exactly
// what the engine runs.

/** One knowledge base's kNN: parameters are the vector blob, k, and the document ids' JSON when filtered. */
export function knnSql(vectorTable: string, filterDocuments: boolean): string {
  return `SELECT rowid, distance FROM "${vectorTable}"
    WHERE embedding MATCH ? AND k = ? AND enabled = 1
    ${filterDocuments ? "AND document_id IN (SELECT value FROM json_each(?))" : ""}`;
}

export const CHUNKS_BY_ROWID_SQL = `SELECT * FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))`;


/** The document-vector table beside a chunk-vector table. */
function documentTableName(vectorTable: string): string {
  return `${vectorTable}_docs`;
}

function isDocumentTable(table: string): boolean {
  return table.endsWith("_docs");
}

function vectorBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A copy: the blob's bytes belong to the statement's buffer and need not be 4-byte aligned. */
function blobVector(blob: Buffer): Float32Array {
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Float32Array(copy.buffer);
}

function toChunk(row: ChunkRow): Chunk {
  return {
    id: row.id,
    documentId: row.document_id,
    knowledgeBaseId: row.knowledge_base_id,
    index: row.chunk_index,
    text: row.text,
    tokenCount: row.token_count,
    page: row.page,
    pageEnd: row.page_end,
    sectionPath: JSON.parse(row.section_path) as string[],
    start: row.start_offset,
    end: row.end_offset,
    ...(row.parent ? { parent: JSON.parse(row.parent) as ChunkParent } : {}),
    ...(row.revision ? { revision: JSON.parse(row.revision) as ChunkRevision } : {}),
    ...(row.disabled ? { disabled: true } : {}),
  };
}

/**
 * A chunk's stored columns around enabled (which the caller decides): place is chunk_index, text,
 * token_count, page, page_end, section_path, start_offset, end_offset; marks is parent, revision, disabled.
 */
function chunkColumns(chunk: Chunk): { place: (string | number)[]; marks: (string | number | null)[] } {
  return {
    place: [chunk.index, chunk.text, chunk.tokenCount, chunk.page, chunk.pageEnd, JSON.stringify(chunk.sectionPath), chunk.start, chunk.end],
    marks: [chunk.parent ? JSON.stringify(chunk.parent) : null, chunk.revision ? JSON.stringify(chunk.revision) : null, chunk.disabled ? 1 : 0],
  };
}
