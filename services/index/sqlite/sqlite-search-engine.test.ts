import { createHash } from "node:crypto";
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
      expect(tables).toEqual(expect.arrayContaining(["knowledge_bases", "documents", "chunks", "search_spaces"]));
      expect(tables.some((name) => name.startsWith("bus_"))).toBe(false);
      // Keyword tables are per knowledge base, made and dropped with it; none is shared.
      expect(tables.filter((name) => name.includes("fts"))).toEqual([]);
    } finally {
      void cleanup();
    }
  });

  it("keeps each knowledge base's terms in a keyword table of its own, dropped with the base", async () => {
    const { db, cleanup } = openTestDatabase();
    const engine = new SqliteSearchEngine(db);
    const keywordTables = () =>
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING fts5%' ORDER BY name`).all() as { name: string }[]).map((t) => t.name);
    try {
      await engine.ensureKnowledgeBase("kb_one", 4);
      await engine.ensureKnowledgeBase("kb/two", 4);
      expect(keywordTables()).toEqual(["fts_h" + createHash("sha256").update("kb/two").digest("hex").slice(0, 32), "fts_kb_one"].sort());
      await engine.dropKnowledgeBase("kb_one");
      expect(keywordTables()).toHaveLength(1);
      expect(keywordTables()).not.toContain("fts_kb_one");
    } finally {
      await engine.close();
      await cleanup();
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
