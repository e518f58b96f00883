// Maps SQLite failures to domain errors in one place for the catalog and the search engine: a
// closed, locked, full or damaged database is Unavailable (retrying later may work); typed domain
// errors pass through; anything else is a bug and propagates as it is.
import { AlreadyExistsError, QuarryError, UnavailableError } from "../../../lib/errors.ts";
import type { SqliteDatabase } from "./open-database.ts";

const UNAVAILABLE_CODES = ["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_CORRUPT", "SQLITE_CANTOPEN", "SQLITE_FULL", "SQLITE_NOTADB", "SQLITE_READONLY", "SQLITE_NOMEM"];

export function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/** Runs a write whose one expected conflict is a taken unique name or id: that becomes AlreadyExistsError(taken). */
export function uniqueOrTaken<T>(taken: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (isUniqueViolation(error)) throw new AlreadyExistsError(taken, { cause: error });
    throw error;
  }
}

export function toDomainError(error: unknown, what: string): unknown {
  if (error instanceof QuarryError) return error;
  const code = sqliteCode(error);
  if (code && UNAVAILABLE_CODES.some((prefix) => code === prefix || code.startsWith(`${prefix}_`))) {
    return new UnavailableError(`${what}: the index database is unavailable (${code})`, { cause: error });
  }
  // better-sqlite3 throws a TypeError for any call on a closed connection (a library's error: its
  // message is all it tells).
  if (error instanceof TypeError && /database connection is not open/i.test(error.message)) {
    return new UnavailableError(`${what}: the index database is closed`, { cause: error });
  }
  return error;
}

/** Runs fn against the database, throwing UnavailableError when it is closed or failing. */
export function withDatabase<T>(db: SqliteDatabase, what: string, fn: () => T): T {
  if (!db.open) throw new UnavailableError(`${what}: the index database is closed`);
  try {
    return fn();
  } catch (error) {
    throw toDomainError(error, what);
  }
}
