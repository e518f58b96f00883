import { describe, expect, it } from "vitest";
import { UnavailableError } from "../../../lib/errors.ts";
import { describeSearchEngineContract } from "../testing/search-engine.contract.ts";
import { schemaVersion } from "./open-database.ts";
import { SqliteSearchEngine, ftsMatchExpression } from "./sqlite-search-engine.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";

describeSearchEngineContract("SQLite FTS5 + sqlite-vec", async () => {
  const { db, cleanup } = openTestDatabase();
  const engine = new SqliteSearchEngine(db);
  return {
    engine,
    async cleanup() {
      await engine.close();
      await cleanup();
    },
  };
});

describe("SqliteSearchEngine", () => {
  it("quotes every query term so FTS5 operators in user text are plain words", () => {
    expect(ftsMatchExpression('fox AND "lazy" NEAR(dog)')).toBe('"fox" OR "and" OR "lazy" OR "near" OR "dog"');
    expect(ftsMatchExpression("…!?")).toBeNull();
  });

  it("migrates a new file to the current schema and leaves other tables alone", () => {
    const { db, cleanup } = openTestDatabase();
    try {
      expect(schemaVersion(db)).toBeGreaterThanOrEqual(1);
      const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((t) => t.name);
      expect(tables).toEqual(expect.arrayContaining(["knowledge_bases", "documents", "chunks", "chunks_fts", "search_spaces"]));
      expect(tables.some((name) => name.startsWith("bus_"))).toBe(false);
    } finally {
      void cleanup();
    }
  });

  it("reports a closed database as unavailable, and closes it only when it owns it", async () => {
    const shared = openTestDatabase();
    try {
      const engine = new SqliteSearchEngine(shared.db);
      await engine.ensureKnowledgeBase("kb_shared", 4);
      await engine.close();
      expect(shared.db.open).toBe(true);

      const another = new SqliteSearchEngine(shared.db);
      shared.db.close();
      await expect(another.getChunks(["x"])).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await shared.cleanup();
    }

    const owned = openTestDatabase();
    try {
      const engine = new SqliteSearchEngine(owned.db, { ownsDatabase: true });
      await engine.close();
      expect(owned.db.open).toBe(false);
    } finally {
      await owned.cleanup();
    }
  });
});
