// One connection's prepared statements, kept by SQL text, and its answers to "does this table
// exist". Preparing is SQLite parsing and planning the statement again: the engine's read path ran
// ten or so a search, each anew (issue 27's profile: `prepare` was 18% of the main thread's samples).
//
// A kept statement never answers from a dropped table: SQLite re-prepares a statement whose schema
// changed before it runs, so one naming a table since dropped fails with "no such table" and one
// naming a table dropped and made again reads the new one. Existence answers have no such guard, so
// they are dropped whenever the schema cookie (PRAGMA schema_version, which every CREATE and DROP on
// any connection bumps) differs from the one they were read under; the statements go with them, so a
// dropped base's statements are not kept. refresh() reads the cookie: call it where a snapshot begins
// (a transaction's first statement) and after this connection's own CREATE or DROP.
import type Database from "better-sqlite3";

/** Statements kept at most; the least recently used goes first (a base has a few dozen texts). */
const DEFAULT_CAPACITY = 256;

export class StatementCache {
  readonly #db: Database.Database;
  readonly #capacity: number;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #tables = new Map<string, boolean>();
  readonly #schemaVersion: Database.Statement<[], number>;
  #schema = -1;

  constructor(db: Database.Database, capacity = DEFAULT_CAPACITY) {
    this.#db = db;
    this.#capacity = Math.max(1, capacity);
    this.#schemaVersion = db.prepare<[], number>(`PRAGMA schema_version`).pluck();
  }

  /** The statement for this SQL text, prepared once. Do not change its modes (pluck, raw, expand): they are shared. */
  prepare<P extends unknown[] | {} = unknown[], R = unknown>(sql: string): Database.Statement<P, R> {
    let statement = this.#statements.get(sql);
    if (statement) {
      // Moved to the end: the map's order is the order of use.
      this.#statements.delete(sql);
    } else {
      statement = this.#db.prepare(sql);
      if (this.#statements.size >= this.#capacity) this.#statements.delete(this.#statements.keys().next().value!);
    }
    this.#statements.set(sql, statement);
    return statement as Database.Statement<P, R>;
  }

  /**
   * Whether a table or view of this name exists, as of the last refresh() inside a transaction;
   * outside one each statement is its own snapshot, so the cookie is read first.
   */
  tableExists(name: string): boolean {
    if (!this.#db.inTransaction) this.refresh();
    let exists = this.#tables.get(name);
    if (exists === undefined) {
      exists = this.prepare(`SELECT 1 FROM sqlite_master WHERE name = ?`).get(name) !== undefined;
      this.#tables.set(name, exists);
    }
    return exists;
  }

  /** Drops what was kept if the schema changed since it was read. */
  refresh(): void {
    const schema = this.#schemaVersion.get()!;
    if (schema === this.#schema) return;
    this.#schema = schema;
    this.#tables.clear();
    this.#statements.clear();
  }

  /** Statements kept now (for tests and the bench). */
  get size(): number {
    return this.#statements.size;
  }
}
