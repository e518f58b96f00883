import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApproximateKnn, chooseKnnPlan, type ApproximateKnnOptions } from "./approximate-knn.ts";
import { openDatabase, openReadOnlyDatabase } from "./open-database.ts";
import { vectorTableName } from "./space-tables.ts";
import { SqliteSearchEngine } from "./sqlite-search-engine.ts";
import { FIXTURE_DIMENSION, fixtureDocument, fixtureVector, vectorQuery } from "../testing/vector-fixtures.ts";

const KB = "kb_ann";
const ALWAYS: ApproximateKnnOptions = { mode: "hnsw", exactBelow: 0, saveEvery: 1_000_000 };

describe("chooseKnnPlan", () => {
  it("scans small tables exactly and asks the index for k on large ones", () => {
    expect(chooseKnnPlan(10, 19_999, undefined, 20_000)).toEqual({ kind: "exact" });
    expect(chooseKnnPlan(10, 20_000, undefined, 20_000)).toEqual({ kind: "approximate", fetch: 10 });
  });

  it("over-fetches by twice the inverse of the filter's share, and scans exactly below a share of 1/16", () => {
    expect(chooseKnnPlan(10, 100_000, 50_000, 20_000)).toEqual({ kind: "approximate", fetch: 40 });
    expect(chooseKnnPlan(10, 100_000, 6_250, 20_000)).toEqual({ kind: "approximate", fetch: 320 });
    expect(chooseKnnPlan(10, 100_000, 6_249, 20_000)).toEqual({ kind: "exact" });
    expect(chooseKnnPlan(10, 100_000, 0, 20_000)).toEqual({ kind: "exact" });
  });
});

describe("SqliteSearchEngine with the approximate index", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function tempFile(): string {
    const dir = mkdtempSync(join(tmpdir(), "quarry-ann-"));
    dirs.push(dir);
    return join(dir, "index.sqlite");
  }

  function open(file: string, vectorIndex: ApproximateKnnOptions = ALWAYS): SqliteSearchEngine {
    return new SqliteSearchEngine(openDatabase(file), { ownsDatabase: true, vectorIndex });
  }

  /** Documents doc0…doc{count-1} of `chunks` fixture chunks each. */
  async function seed(engine: SqliteSearchEngine, count: number, chunks = 5): Promise<void> {
    await engine.ensureKnowledgeBase(KB, FIXTURE_DIMENSION);
    for (let n = 0; n < count; n++) await engine.replaceDocumentChunks(KB, `doc${n}`, `doc${n}.txt`, fixtureDocument(KB, `doc${n}`, chunks));
  }

  /** The chunk id each self-query returns first, for the chunks of these documents. */
  async function selfHits(engine: SqliteSearchEngine, documents: number[], chunks = 5, documentIds: string[] = []): Promise<(string | undefined)[]> {
    const out: (string | undefined)[] = [];
    for (const n of documents) {
      for (let i = 0; i < chunks; i++) out.push((await engine.search(vectorQuery(KB, fixtureVector(`doc${n}`, i), 1, documentIds)))[0]?.chunk.id);
    }
    return out;
  }

  const expected = (documents: number[], chunks = 5) => documents.flatMap((n) => Array.from({ length: chunks }, (_, i) => `doc${n}-${i}`));
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);

  it("keeps deleted and disabled chunks out and takes re-enabled ones back", async () => {
    const engine = open(tempFile());
    try {
      await seed(engine, 20);
      expect(await selfHits(engine, range(20))).toEqual(expected(range(20)));
      await engine.deleteDocument(KB, "doc3");
      await engine.setDocumentEnabled(KB, "doc4", false);
      await engine.setChunkDisabled(KB, "doc5-2", true);
      const hits = await selfHits(engine, [3, 4, 5]);
      expect(hits.filter((id) => /^doc(3|4)-|^doc5-2$/.test(id ?? ""))).toEqual([]);
      expect(hits.filter((id) => /^doc5-[0134]$/.test(id ?? ""))).toHaveLength(4);
      await engine.setDocumentEnabled(KB, "doc4", true);
      await engine.setChunkDisabled(KB, "doc5-2", false);
      expect(await selfHits(engine, [4, 5])).toEqual(expected([4, 5]));
    } finally {
      await engine.close();
    }
  });

  it("applies a document filter by over-fetching, and answers a very selective one exactly", async () => {
    const engine = open(tempFile());
    try {
      await seed(engine, 40);
      const half = range(20).map((n) => `doc${n * 2}`);
      const hits = await engine.search(vectorQuery(KB, fixtureVector("doc7", 0), 10, half));
      expect(hits).toHaveLength(10);
      expect(hits.every((hit) => half.includes(hit.chunk.documentId))).toBe(true);
      expect(await selfHits(engine, [6, 8], 5, half)).toEqual(expected([6, 8]));
      // One document of forty is a share of 1/40: the exact scan, the whole document found.
      const one = await engine.search(vectorQuery(KB, fixtureVector("doc9", 0), 10, ["doc9"]));
      expect(one.map((hit) => hit.chunk.id).sort()).toEqual(expected([9]));
    } finally {
      await engine.close();
    }
  });

  it("saves the index on close, and a restart takes in writes another process made after the save", async () => {
    const file = tempFile();
    const first = open(file);
    await seed(first, 20);
    // A search loads the index; close saves what is loaded (a build is left to writes or searches).
    await first.search(vectorQuery(KB, fixtureVector("doc0", 0), 1));
    await first.close();
    expect(readdirSync(`${file}.vectors`).filter((name) => name.endsWith(".usearch"))).toHaveLength(1);

    // A second writer that never saves: as if killed after its commits.
    const writer = open(file);
    await writer.replaceDocumentChunks(KB, "doc20", "doc20.txt", fixtureDocument(KB, "doc20", 5));
    await writer.deleteDocument(KB, "doc3");
    await writer.replaceDocumentChunks(KB, "doc4", "doc4.txt", fixtureDocument(KB, "doc4", 2));
    const db = openDatabase(file);
    db.close();

    const restarted = open(file);
    try {
      expect(await selfHits(restarted, [20])).toEqual(expected([20]));
      expect(await selfHits(restarted, [4], 2)).toEqual(expected([4], 2));
      const gone = [...(await selfHits(restarted, [3])), ...(await selfHits(restarted, [4]))];
      expect(gone.filter((id) => /^doc3-|^doc4-[234]$/.test(id ?? ""))).toEqual([]);
    } finally {
      await restarted.close();
    }
  });

  it("rebuilds from SQLite, never loading it, when the saved file is not the one its save recorded", async () => {
    const file = tempFile();
    const first = open(file);
    await seed(first, 20);
    // A search loads the index; close saves what is loaded (a build is left to writes or searches).
    await first.search(vectorQuery(KB, fixtureVector("doc0", 0), 1));
    await first.close();
    const dir = `${file}.vectors`;
    const [saved] = readdirSync(dir);
    // usearch trusts the header: a damaged file loaded could make it allocate without bound.
    writeFileSync(join(dir, saved), "not an index");
    const writer = open(file);
    await writer.deleteDocument(KB, "doc0");
    await writer.close();

    const restarted = open(file);
    try {
      expect(await selfHits(restarted, range(20).slice(1))).toEqual(expected(range(20).slice(1)));
      expect((await selfHits(restarted, [0])).filter((id) => id?.startsWith("doc0-"))).toEqual([]);
    } finally {
      await restarted.close();
    }
  });

  it("counts a small table's enabled rows again after any write, this connection's or another's", async () => {
    const file = tempFile();
    const small: ApproximateKnnOptions = { mode: "hnsw", exactBelow: 1_000, saveEvery: 1_000_000 };
    const engine = open(file, small);
    const db = openDatabase(file);
    const ann = new ApproximateKnn(db, small, "writer");
    const table = vectorTableName(KB);
    try {
      await seed(engine, 4);
      expect(ann.enabledRows(table)).toBe(20);
      // Another connection's writes: a document added, one disabled.
      await seed(engine, 5);
      expect(ann.enabledRows(table)).toBe(25);
      await engine.setDocumentEnabled(KB, "doc1", false);
      expect(ann.enabledRows(table)).toBe(20);
      // This connection's own write, recorded as every write to a vector table is.
      const { rowid } = db.prepare(`SELECT rowid FROM "${table}" WHERE document_id = 'doc2' LIMIT 1`).get() as { rowid: number };
      db.transaction(() => {
        db.prepare(`UPDATE "${table}" SET enabled = 0 WHERE rowid = ?`).run(BigInt(rowid));
        ann.recordChange(table, rowid);
      })();
      expect(ann.enabledRows(table)).toBe(19);
    } finally {
      ann.close();
      db.close();
      await engine.close();
    }
  });

  it("finds more of the exact top 10 with a wider search expansion, on vectors with no neighbourhoods", async () => {
    // 2,000 uniformly random 32-d vectors: every one about as near a query as the next, the case
    // where a narrow HNSW walk misses true neighbours (a model's vectors are kinder).
    const queries = Array.from({ length: 30 }, (_, i) => fixtureVector("query", i));
    const topTen = async (vectorIndex: ApproximateKnnOptions) => {
      const engine = open(tempFile(), vectorIndex);
      try {
        await seed(engine, 400);
        const lists: string[][] = [];
        for (const vector of queries) lists.push((await engine.search(vectorQuery(KB, vector, 10))).map((hit) => hit.chunk.id));
        return lists;
      } finally {
        await engine.close();
      }
    };
    const exact = await topTen({ mode: "exact", exactBelow: 0, saveEvery: 1_000_000 });
    const recall = (lists: string[][]) => lists.reduce((found, list, q) => found + list.filter((id) => exact[q].includes(id)).length, 0) / (10 * queries.length);
    const narrow = recall(await topTen({ ...ALWAYS, expansionSearch: 10 }));
    const wide = recall(await topTen({ ...ALWAYS, expansionSearch: 1_000 }));
    expect(wide).toBeGreaterThanOrEqual(0.99);
    expect(narrow).toBeLessThan(wide);
  });

  it("keeps no index and logs no change with the index set to exact", async () => {
    const file = tempFile();
    const engine = open(file, { mode: "exact", exactBelow: 0, saveEvery: 1 });
    try {
      await seed(engine, 10);
      expect(await selfHits(engine, range(10))).toEqual(expected(range(10)));
    } finally {
      await engine.close();
    }
    const db = openDatabase(file);
    expect(db.prepare(`SELECT count(*) AS n FROM vector_index_changes`).get()).toEqual({ n: 0 });
    db.close();
    expect(() => readdirSync(`${file}.vectors`)).toThrow();
  });
});

describe("ApproximateKnn as a read thread's reader", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("loads only the writer's saves, catches up from the log, and reloads when a newer save trimmed it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "quarry-ann-reader-"));
    dirs.push(dir);
    const file = join(dir, "index.sqlite");
    const options: ApproximateKnnOptions = { mode: "hnsw", exactBelow: 0, saveEvery: 10 };
    const writer = new SqliteSearchEngine(openDatabase(file), { ownsDatabase: true, vectorIndex: options, readThreads: 1 });
    const readerDb = openReadOnlyDatabase(file);
    const reader = new ApproximateKnn(readerDb, options, "reader");
    const table = vectorTableName(KB);
    const write = (n: number) => writer.replaceDocumentChunks(KB, `doc${n}`, `doc${n}.txt`, fixtureDocument(KB, `doc${n}`, 5));
    const enabledRows = () => readerDb.transaction(() => reader.enabledRows(table))();
    try {
      await writer.ensureKnowledgeBase(KB, FIXTURE_DIMENSION);
      await write(0);
      // Nothing saved yet: the reader has no index, so its searches scan exactly.
      expect(enabledRows()).toBe(0);
      for (const n of [1, 2, 3]) await write(n);
      expect(enabledRows()).toBe(20); // the save at the 20th change
      await write(4);
      expect(enabledRows()).toBe(25); // caught up from the log, unsaved
      await write(5);
      // The writer saved at the 30th change and trimmed the log up to it: the reader loads that file.
      expect(enabledRows()).toBe(30);
      await writer.deleteDocument(KB, "doc0");
      expect(enabledRows()).toBe(25);
      // The engine's own read thread answers from the same saves and log.
      const hits = await writer.search(vectorQuery(KB, fixtureVector("doc5", 3), 1));
      expect(hits[0]?.chunk.id).toBe("doc5-3");
    } finally {
      reader.close();
      readerDb.close();
      await writer.close();
    }
  });
});
