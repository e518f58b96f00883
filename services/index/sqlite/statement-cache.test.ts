import { describe, expect, it } from "vitest";
import { openReadOnlyDatabase } from "./open-database.ts";
import { StatementCache } from "./statement-cache.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";

describe("StatementCache", () => {
  it("prepares a SQL text once and keeps the most recently used within its capacity", async () => {
    const { db, cleanup } = openTestDatabase();
    try {
      const cache = new StatementCache(db, 2);
      const first = cache.prepare(`SELECT 1 AS n`);
      expect(cache.prepare(`SELECT 1 AS n`)).toBe(first);
      cache.prepare(`SELECT 2 AS n`);
      cache.prepare(`SELECT 1 AS n`);
      // Capacity 2: the third text pushes out the least recently used, SELECT 2.
      cache.prepare(`SELECT 3 AS n`);
      expect(cache.size).toBe(2);
      expect(cache.prepare(`SELECT 1 AS n`)).toBe(first);
      expect(cache.prepare(`SELECT 1 AS n`).get()).toEqual({ n: 1 });
    } finally {
      await cleanup();
    }
  });

  it("never reads a dropped table through a kept statement: it fails while the table is gone and reads the new one once made again", async () => {
    const { db, cleanup } = openTestDatabase();
    try {
      const cache = new StatementCache(db);
      db.exec(`CREATE TABLE kept (a); INSERT INTO kept VALUES (1), (2)`);
      expect(cache.prepare(`SELECT * FROM kept ORDER BY 1`).all()).toEqual([{ a: 1 }, { a: 2 }]);
      db.exec(`DROP TABLE kept`);
      expect(() => cache.prepare(`SELECT * FROM kept ORDER BY 1`).all()).toThrow(/no such table/);
      db.exec(`CREATE TABLE kept (b, c); INSERT INTO kept VALUES (7, 8)`);
      expect(cache.prepare(`SELECT * FROM kept ORDER BY 1`).all()).toEqual([{ b: 7, c: 8 }]);
    } finally {
      await cleanup();
    }
  });

  it("answers table existence as of the schema another connection changed, in and out of a transaction", async () => {
    const { db, file, cleanup } = openTestDatabase();
    const reader = openReadOnlyDatabase(file);
    try {
      const cache = new StatementCache(reader);
      expect(cache.tableExists("late")).toBe(false);
      db.exec(`CREATE TABLE late (a)`);
      // Outside a transaction every call is its own snapshot: the cookie is read each time.
      expect(cache.tableExists("late")).toBe(true);

      const inSnapshot = reader.transaction(() => {
        cache.refresh();
        return cache.tableExists("late");
      });
      db.exec(`DROP TABLE late`);
      expect(inSnapshot()).toBe(false);
      db.exec(`CREATE TABLE late (a)`);
      expect(inSnapshot()).toBe(true);
      // Kept answers are dropped with the statements when the schema changes.
      const statement = cache.prepare(`SELECT count(*) AS n FROM late`);
      db.exec(`CREATE TABLE other (a)`);
      cache.refresh();
      expect(cache.prepare(`SELECT count(*) AS n FROM late`)).not.toBe(statement);
    } finally {
      reader.close();
      await cleanup();
    }
  });
});
