// Leases in the embedded mode's SQLite file (a table of their own beside the bus's per-topic
// leases): one row per lease, taken by an upsert that only overwrites a row that is free, expired or
// already the caller's, so of two processes on the file exactly one gets it.
import Database from "better-sqlite3";
import type { LeaseRecord, LeaseStore } from "./lease-store.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS leases (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
`;

export class SqliteLeaseStore implements LeaseStore {
  private readonly db: Database.Database;
  private readonly sql;

  /** Opens its own connection to the file (created when missing). */
  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    this.sql = {
      acquire: this.db.prepare(
        `INSERT INTO leases (name, owner, expires_at) VALUES (@name, @owner, @expiresAt)
         ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
         WHERE leases.owner = excluded.owner OR leases.expires_at < @now`,
      ),
      renew: this.db.prepare("UPDATE leases SET expires_at = @expiresAt WHERE name = @name AND owner = @owner"),
      release: this.db.prepare("DELETE FROM leases WHERE name = @name AND owner = @owner"),
      holder: this.db.prepare<[string], { owner: string; expires_at: number }>("SELECT owner, expires_at FROM leases WHERE name = ?"),
    };
  }

  async acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    return this.sql.acquire.run({ name, owner, expiresAt: now + ttlMs, now }).changes > 0;
  }

  async renew(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.sql.renew.run({ name, owner, expiresAt: Date.now() + ttlMs }).changes > 0;
  }

  async release(name: string, owner: string): Promise<void> {
    this.sql.release.run({ name, owner });
  }

  async holder(name: string): Promise<LeaseRecord | undefined> {
    const row = this.sql.holder.get(name);
    return row && { owner: row.owner, expiresAt: row.expires_at };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
