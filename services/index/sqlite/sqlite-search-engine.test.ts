import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { EmbeddedChunk, RetrievalMode, SearchQuery } from "../../../lib/domain.ts";
import { NotFoundError, UnavailableError } from "../../../lib/errors.ts";
import { describeSearchEngineContract } from "../testing/search-engine.contract.ts";
import { schemaVersion } from "./open-database.ts";
import { SqliteSearchEngine } from "./sqlite-search-engine.ts";
import { bm25Parameters, createKeywordTable, keywordIndexSize, sqliteVarints } from "./space-tables.ts";
import { queryTermWeight, weightedQueryTerms } from "../search/query-terms.ts";
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

// The same contract with every base on the approximate index (no exact threshold) and a save every
// three changes, so the index's catch-up, saves and log trims run under every contract case.
describeSearchEngineContract("SQLite FTS5 + usearch approximate kNN", async () => {
  const { db, cleanup } = openTestDatabase();
  const engine = new SqliteSearchEngine(db, { vectorIndex: { mode: "hnsw", exactBelow: 0, saveEvery: 3 } });
  return {
    engine,
    async cleanup() {
      await engine.close();
      await cleanup();
    },
  };
});

// The same contract with every read on a read thread's own read-only connection (read-threads.ts),
// exact and approximate: each case writes on the main thread and reads what it wrote there.
for (const [name, vectorIndex] of [
  ["exact", { mode: "exact", exactBelow: 0, saveEvery: 3 }],
  ["usearch approximate", { mode: "hnsw", exactBelow: 0, saveEvery: 3 }],
] as const) {
  describeSearchEngineContract(`SQLite FTS5 + ${name} kNN, reads on a thread`, async () => {
    const { db, cleanup } = openTestDatabase();
    const engine = new SqliteSearchEngine(db, { vectorIndex, readThreads: 1 });
    return {
      engine,
      async cleanup() {
        await engine.close();
        await cleanup();
      },
    };
  });
}

describe("SqliteSearchEngine", () => {
  it("quotes every query term so FTS5 operators in user text are plain words", () => {
    const groups = weightedQueryTerms('fox AND "lazy" NEAR(dog) "fox"', 10);
    expect(bm25Parameters(groups)).toEqual({
      match0: '"and" OR "lazy" OR "near" OR "dog"',
      weight0: queryTermWeight(1, 6, 10),
      match1: '"fox"',
      weight1: queryTermWeight(2, 6, 10),
    });
  });

  it("reads a keyword table's row and term totals from FTS5's averages record", async () => {
    const { db, cleanup } = openTestDatabase();
    try {
      createKeywordTable(db, "kw_size");
      expect(keywordIndexSize(db, "kw_size")).toEqual({ rows: 0, terms: 0 });
      const insert = db.prepare(`INSERT INTO kw_size (rowid, terms) VALUES (?, ?)`);
      // 20,000 terms in all needs a three-byte varint; 3 rows a one-byte one.
      insert.run(1, "a b c");
      insert.run(2, Array.from({ length: 19_990 }, (_, i) => `w${i % 50}`).join(" "));
      insert.run(3, "d e f g h i j");
      expect(keywordIndexSize(db, "kw_size")).toEqual({ rows: 3, terms: 20_000 });
    } finally {
      await cleanup();
    }
  });

  it("decodes SQLite varints, big-endian, with a full ninth byte", () => {
    expect(sqliteVarints(Uint8Array.from([0x05, 0x81, 0x00, 0x82, 0x80, 0x01]), 3)).toEqual([5, 128, 2 * 128 * 128 + 1]);
    expect(sqliteVarints(Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x02]), 1)).toEqual([2 ** 8 * 1 + 2]);
    expect(sqliteVarints(Uint8Array.from([0x01, 0x02, 0x03]), 2)).toEqual([1, 2]);
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

// Statements and table-existence answers are kept per connection (statement-cache.ts); these cases
// change a base's tables under them, on the writer's connection and on a read thread's.
describe("SqliteSearchEngine's kept statements when a base's tables change", () => {
  const chunk = (documentId: string, text: string, vector: number[]): EmbeddedChunk => ({
    id: `${documentId}-0`,
    documentId,
    knowledgeBaseId: "kb_kept",
    index: 0,
    text,
    tokenCount: 2,
    page: 1,
    pageEnd: 1,
    sectionPath: [],
    start: 0,
    end: text.length,
    vector: new Float32Array(vector),
  });
  const query = (mode: RetrievalMode, text: string, vector?: number[]): SearchQuery => ({
    knowledgeBaseIds: ["kb_kept"],
    text,
    mode,
    topK: 5,
    minScore: 0,
    documentIds: [],
    ...(vector ? { vector: new Float32Array(vector) } : {}),
  });
  const hitIds = (hits: { chunk: { id: string } }[]) => hits.map((hit) => hit.chunk.id);

  for (const readThreads of [0, 1]) {
    const where = readThreads ? "on a read thread" : "on the writer's connection";

    it(`answers a base dropped and made again under its id (same table names, new dimension) from its new rows, ${where}`, async () => {
      const { db, cleanup } = openTestDatabase();
      const engine = new SqliteSearchEngine(db, { readThreads });
      try {
        await engine.ensureKnowledgeBase("kb_kept", 4);
        await engine.replaceDocumentChunks("kb_kept", "old", "old.txt", [chunk("old", "granite quarry", [1, 0, 0, 0])]);
        expect(hitIds(await engine.search(query("bm25", "granite")))).toEqual(["old-0"]);
        expect(hitIds(await engine.search(query("hybrid", "granite", [1, 0, 0, 0])))).toEqual(["old-0"]);

        await engine.dropKnowledgeBase("kb_kept");
        await expect(engine.search(query("hybrid", "granite", [1, 0, 0, 0]))).rejects.toBeInstanceOf(NotFoundError);

        await engine.ensureKnowledgeBase("kb_kept", 3);
        await engine.replaceDocumentChunks("kb_kept", "new", "new.txt", [chunk("new", "granite slab", [0, 1, 0])]);
        expect(hitIds(await engine.search(query("bm25", "granite")))).toEqual(["new-0"]);
        expect(hitIds(await engine.search(query("hybrid", "granite", [0, 1, 0])))).toEqual(["new-0"]);
        // The old dimension is refused as any wrong dimension is, not run against a kept statement.
        await expect(engine.search(query("vector", "granite", [1, 0, 0, 0]))).rejects.toThrow(/dimension/);
      } finally {
        await engine.close();
        await cleanup();
      }
    });

    it(`sees a document-vector table made after it was found missing, ${where}`, async () => {
      const { db, cleanup } = openTestDatabase();
      const engine = new SqliteSearchEngine(db, { readThreads });
      try {
        await engine.ensureKnowledgeBase("kb_kept", 4);
        await engine.replaceDocumentChunks("kb_kept", "doc", "doc.txt", [chunk("doc", "basalt column", [0, 0, 1, 0])]);
        // A base from before document vectors: no document table until its first document vector.
        const vectorTable = (db.prepare(`SELECT vector_table FROM search_spaces WHERE knowledge_base_id = 'kb_kept'`).get() as { vector_table: string }).vector_table;
        db.exec(`DROP TABLE "${vectorTable}_docs"`);
        const before = await engine.search(query("vector", "basalt", [1, 0, 0, 0]));
        expect(before.map((hit) => hit.explain?.documentRank ?? 0)).toEqual([0]);

        await engine.replaceDocumentChunks("kb_kept", "doc", "doc.txt", [chunk("doc", "basalt column", [0, 0, 1, 0])], new Float32Array([1, 0, 0, 0]));
        const after = await engine.search(query("vector", "basalt", [1, 0, 0, 0]));
        expect(hitIds(after)).toEqual(["doc-0"]);
        expect(after[0].explain?.documentRank).toBe(1);
      } finally {
        await engine.close();
        await cleanup();
      }
    });
  }
});
