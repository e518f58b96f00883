// Opens the embedded index's SQLite file: WAL so readers never wait for the writer, sqlite-vec for
// vectors, and this module's own migrations. The same file also holds the embedded event bus
// (tables prefixed bus_), which migrates itself; nothing here touches those tables.
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { UnavailableError } from "../../../lib/errors.ts";
import { silentLogger, type Logger } from "../../../lib/logger.ts";
import { splitKeywordIndex } from "./split-keyword-index.ts";
import { rebuildKeywordTables } from "./exact-keyword-statistics.ts";

export type SqliteDatabase = Database.Database;

export interface OpenDatabaseOptions {
  /** How long a statement waits for another connection's write lock before failing. */
  busyTimeoutMs?: number;
  /** Where a long migration says what it is doing (the split of schema 4); silent by default. */
  logger?: Logger;
}

interface Migration {
  version: number;
  sql: string;
  /** A step SQL alone cannot take, run after sql in the same transaction. */
  run?: (db: SqliteDatabase, logger: Logger) => void;
}

// Append only: a shipped migration is never edited, a change is a new entry.
const MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE IF NOT EXISTS knowledge_bases (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        description TEXT NOT NULL,
        embedding_model TEXT NOT NULL,
        embedding_dimension INTEGER NOT NULL,
        chunking TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );

      CREATE TABLE IF NOT EXISTS documents (
        id TEXT PRIMARY KEY,
        knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
        file_name TEXT NOT NULL,
        mime_type TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        version INTEGER NOT NULL,
        status TEXT NOT NULL,
        progress_percent REAL NOT NULL,
        chunk_count INTEGER NOT NULL,
        token_count INTEGER NOT NULL,
        error_message TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        metadata TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (knowledge_base_id, file_name)
      );

      -- The search engine's own registry: which knowledge bases have chunk storage, with which
      -- vector dimension and vec0 table. Independent of knowledge_bases (the catalog), as the
      -- engine and the catalog are separate interfaces.
      CREATE TABLE IF NOT EXISTS search_spaces (
        knowledge_base_id TEXT PRIMARY KEY,
        dimension INTEGER NOT NULL,
        vector_table TEXT NOT NULL UNIQUE
      );

      CREATE TABLE IF NOT EXISTS search_documents (
        knowledge_base_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        PRIMARY KEY (knowledge_base_id, document_id)
      );

      CREATE TABLE IF NOT EXISTS chunks (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        knowledge_base_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        file_name TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        text TEXT NOT NULL,
        token_count INTEGER NOT NULL,
        page INTEGER NOT NULL,
        page_end INTEGER NOT NULL,
        section_path TEXT NOT NULL,
        start_offset INTEGER NOT NULL,
        end_offset INTEGER NOT NULL,
        enabled INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks (knowledge_base_id, document_id, chunk_index);

      -- Contentless: the raw text lives in chunks; the index holds the segmented terms only.
      -- contentless_delete lets a chunk's row be removed without re-supplying its terms.
      -- porter stems English terms ("citations" → "citation") on both sides, as MATCH strings go
      -- through the same tokenizer; it leaves the segmented Chinese terms as they are.
      CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
        terms,
        content = '',
        contentless_delete = 1,
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
    `,
  },
  {
    version: 2,
    sql: `
      -- A change of embedding model in progress or finished (JSON), for the catalog to report.
      ALTER TABLE knowledge_bases ADD COLUMN model_change TEXT;

      -- The search engine's shadow vector tables: a knowledge base's chunks re-embedded with another
      -- model, keyed by the same chunk rowids as its live vec0 table, swapped in when complete.
      CREATE TABLE IF NOT EXISTS search_space_shadows (
        knowledge_base_id TEXT PRIMARY KEY,
        dimension INTEGER NOT NULL,
        vector_table TEXT NOT NULL UNIQUE
      );
    `,
  },
  {
    version: 3,
    sql: `
      -- Two-level chunking: the chunk's parent span and the run of its siblings (JSON), NULL for a
      -- chunk without one.
      ALTER TABLE chunks ADD COLUMN parent TEXT;
    `,
  },
  {
    version: 4,
    sql: "",
    // One keyword (FTS5) table per knowledge base instead of chunks_fts, so BM25's statistics are
    // the base's own; search_spaces.keyword_table names it.
    run: splitKeywordIndex,
  },
  {
    version: 5,
    sql: `
      -- Chunks corrected or written by hand (docs/DOCUMENTS.md): the revision (JSON: version,
      -- manual, original text), NULL for a chunk as ingested; and the chunk's own disabled flag,
      -- beside enabled, which stays the flag search reads (document enabled and chunk not disabled).
      ALTER TABLE chunks ADD COLUMN revision TEXT;
      ALTER TABLE chunks ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
      -- What indexing the document's version did to its hand edits; '' when it had none.
      ALTER TABLE documents ADD COLUMN chunk_edits TEXT NOT NULL DEFAULT '';
    `,
  },
  {
    version: 6,
    sql: "",
    // Keyword tables without contentless_delete, whose deletes shrink BM25's totals (space-tables.ts).
    run: rebuildKeywordTables,
  },
  {
    version: 7,
    sql: `
      -- The trace of the call that submitted the document's version (docs/OBSERVABILITY.md); '' untraced.
      ALTER TABLE documents ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';
    `,
  },
  {
    version: 8,
    sql: `
      -- Documents written while their base changes its embedding model (by any writer): the change
      -- embeds them again from their live chunks before it switches (catalog/model-change.ts).
      CREATE TABLE IF NOT EXISTS model_change_documents (
        knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
        document_id TEXT NOT NULL,
        PRIMARY KEY (knowledge_base_id, document_id)
      );
    `,
  },
];

const VERSION_TABLE = "index_schema_version";

/** Opens (creating if needed) and migrates the index database. */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): SqliteDatabase {
  let db: SqliteDatabase;
  try {
    db = new Database(file);
  } catch (error) {
    throw new UnavailableError(`cannot open the index database ${file}`, { cause: error });
  }
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    sqliteVec.load(db);
    migrate(db, Infinity, options.logger);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * A read-only connection on a file the writer has opened (and migrated) already: a search thread's
 * own (read-threads.ts). WAL lets it read the last committed state while the writer writes.
 */
export function openReadOnlyDatabase(file: string, options: Pick<OpenDatabaseOptions, "busyTimeoutMs"> = {}): SqliteDatabase {
  let db: SqliteDatabase;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new UnavailableError(`cannot open the index database ${file} for reading`, { cause: error });
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    sqliteVec.load(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Brings the schema up to date (or up to version upTo, for tests that build a file as an older
 * Quarry left it); safe to run on every start and from several processes.
 */
export function migrate(db: SqliteDatabase, upTo = Infinity, logger: Logger = silentLogger): void {
  // The version table has this module's own name: the event bus shares the file and keeps its own.
  db.exec(`CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (version INTEGER NOT NULL)`);
  const apply = db.transaction(() => {
    const row = db.prepare(`SELECT MAX(version) AS version FROM ${VERSION_TABLE}`).get() as { version: number | null };
    const current = row.version ?? 0;
    for (const migration of MIGRATIONS) {
      if (migration.version <= current || migration.version > upTo) continue;
      db.exec(migration.sql);
      migration.run?.(db, logger);
      db.prepare(`INSERT INTO ${VERSION_TABLE} (version) VALUES (?)`).run(migration.version);
    }
  });
  // IMMEDIATE takes the write lock before reading the version, so two processes cannot both apply.
  apply.immediate();
}

export function schemaVersion(db: SqliteDatabase): number {
  const row = db.prepare(`SELECT MAX(version) AS version FROM ${VERSION_TABLE}`).get() as { version: number | null };
  return row.version ?? 0;
}
