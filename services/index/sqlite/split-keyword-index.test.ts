// A data dir written before keyword tables were per knowledge base (schema version 3: one contentless
// chunks_fts for every base) opens with today's code, is split once, and searches as a file made
// today would: each base's BM25 statistics its own.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { afterEach, describe, expect, it } from "vitest";
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import type { EmbeddedChunk, SearchQuery } from "../../../lib/domain.ts";
import { createLogger, type Logger } from "../../../lib/logger.ts";
import { segmentForIndex } from "../search/text-segmenter.ts";
import { commonWordTexts, RARE_WORD_QUESTION, RARE_WORD_TEXTS } from "../testing/keyword-statistics-texts.ts";
import { migrate, openDatabase, schemaVersion, type SqliteDatabase } from "./open-database.ts";
import { SqliteSearchEngine } from "./sqlite-search-engine.ts";

const DIM = 4;

interface OldChunk {
  id: string;
  documentId: string;
  index: number;
  text: string;
  sectionPath: string[];
  vector: number[];
  enabled: boolean;
}

/** Base A: English chunks, a Chinese one, and a disabled document; base B repeats A's rare word. */
function baseA(): OldChunk[] {
  const english = RARE_WORD_TEXTS.map((text, i) => ({ id: `a-${i}`, documentId: "doc_weather", index: i, text, sectionPath: ["Weather", `Part ${i}`], vector: [1, i, 0, 0], enabled: true }));
  return [
    ...english,
    { id: "a-zh", documentId: "doc_law", index: 0, text: "最高人民检察院依法对刑事诉讼实行法律监督。", sectionPath: [], vector: [0, 0, 1, 0], enabled: true },
    { id: "a-off", documentId: "doc_off", index: 0, text: "Hailstorm warnings closed the harbour.", sectionPath: ["Off"], vector: [0, 0, 0, 1], enabled: false },
  ];
}

function baseB(): OldChunk[] {
  return commonWordTexts().map((text, i) => ({ id: `b-${i}`, documentId: "doc_sails", index: i, text, sectionPath: [], vector: [0, 1, 0, 0], enabled: true }));
}

/** What the engine wrote at schema version 3: chunks, their terms in the shared chunks_fts, vectors. */
function writeOldLayout(db: SqliteDatabase, knowledgeBaseId: string, chunks: OldChunk[]): void {
  const vectorTable = `vec_${knowledgeBaseId}`;
  db.prepare(`INSERT INTO search_spaces (knowledge_base_id, dimension, vector_table) VALUES (?, ?, ?)`).run(knowledgeBaseId, DIM, vectorTable);
  for (const name of [vectorTable, `${vectorTable}_docs`]) {
    db.exec(`CREATE VIRTUAL TABLE "${name}" USING vec0(embedding float[${DIM}] distance_metric=cosine, document_id text, enabled integer)`);
  }
  const insertDocument = db.prepare(`INSERT OR IGNORE INTO search_documents (knowledge_base_id, document_id, enabled) VALUES (?, ?, ?)`);
  const insertChunk = db.prepare(
    `INSERT INTO chunks (id, knowledge_base_id, document_id, file_name, chunk_index, text, token_count, page, page_end, section_path, start_offset, end_offset, enabled, parent)
     VALUES (?, ?, ?, ?, ?, ?, ?, 1, 1, ?, 0, ?, ?, NULL)`,
  );
  const insertTerms = db.prepare(`INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)`);
  const insertVector = db.prepare(`INSERT INTO "${vectorTable}" (rowid, embedding, document_id, enabled) VALUES (?, ?, ?, ?)`);
  for (const c of chunks) {
    insertDocument.run(knowledgeBaseId, c.documentId, c.enabled ? 1 : 0);
    const { lastInsertRowid } = insertChunk.run(c.id, knowledgeBaseId, c.documentId, `${c.documentId}.txt`, c.index, c.text, c.text.length, JSON.stringify(c.sectionPath), c.text.length, c.enabled ? 1 : 0);
    insertTerms.run(lastInsertRowid, segmentForIndex(withHeadingPath(c.text, c.sectionPath)));
    insertVector.run(BigInt(lastInsertRowid), Buffer.from(new Float32Array(c.vector).buffer), c.documentId, c.enabled ? 1n : 0n);
  }
}

function toEmbedded(knowledgeBaseId: string, c: OldChunk): EmbeddedChunk {
  return {
    id: c.id,
    documentId: c.documentId,
    knowledgeBaseId,
    index: c.index,
    text: c.text,
    tokenCount: c.text.length,
    page: 1,
    pageEnd: 1,
    sectionPath: c.sectionPath,
    start: 0,
    end: c.text.length,
    vector: new Float32Array(c.vector),
  };
}

function bm25(kb: string, text = RARE_WORD_QUESTION): SearchQuery {
  return { knowledgeBaseIds: [kb], text, mode: "bm25", topK: 10, minScore: 0, documentIds: [] };
}

const scored = (hits: { chunk: { id: string }; score: number }[]) => hits.map((hit) => ({ id: hit.chunk.id, score: hit.score }));

/** A real logger at info whose lines are kept, parsed, to read what the migration said. */
function capturedLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger("quarry", "info", { write: (line: string) => void lines.push(JSON.parse(line)) }) };
}

describe("opening a data dir whose keyword index spans every knowledge base", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A file as schema version 3 left it, holding bases kb_a and kb_b. */
  function oldDataDir(tamper?: (db: SqliteDatabase) => void): string {
    const dir = mkdtempSync(join(tmpdir(), "quarry-split-fts-"));
    dirs.push(dir);
    const file = join(dir, "quarry.db");
    const db = new Database(file);
    try {
      sqliteVec.load(db);
      migrate(db, 3);
      db.transaction(() => {
        writeOldLayout(db, "kb_a", baseA());
        writeOldLayout(db, "kb_b", baseB());
        tamper?.(db);
      })();
    } finally {
      db.close();
    }
    return file;
  }

  /** The same base A written by today's engine into a file of its own. */
  async function freshBaseA(): Promise<{ engine: SqliteSearchEngine; close(): Promise<void> }> {
    const dir = mkdtempSync(join(tmpdir(), "quarry-split-fts-"));
    dirs.push(dir);
    const engine = new SqliteSearchEngine(openDatabase(join(dir, "quarry.db")), { ownsDatabase: true });
    await engine.ensureKnowledgeBase("kb_a", DIM);
    const chunks = baseA();
    for (const documentId of new Set(chunks.map((c) => c.documentId))) {
      const mine = chunks.filter((c) => c.documentId === documentId);
      await engine.replaceDocumentChunks("kb_a", documentId, `${documentId}.txt`, mine.map((c) => toEmbedded("kb_a", c)));
      if (!mine[0].enabled) await engine.setDocumentEnabled("kb_a", documentId, false);
    }
    return { engine, close: () => engine.close() };
  }

  function tables(db: SqliteDatabase): string[] {
    return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]).map((t) => t.name);
  }

  it("moves each base's terms into its own keyword table once, and then searches as a file made today", async () => {
    const file = oldDataDir();
    const fresh = await freshBaseA();
    const expected = scored(await fresh.engine.search(bm25("kb_a")));
    // Twice the zephyr leads while the word is rare in A; B's forty zephyrs would have sunk it.
    expect(expected.map((hit) => hit.id)).toEqual(["a-0", "a-1", "a-3"]);

    const engine = new SqliteSearchEngine(openDatabase(file), { ownsDatabase: true });
    try {
      expect(scored(await engine.search(bm25("kb_a")))).toEqual(expected);
      expect(scored(await engine.search(bm25("kb_a", "检察 诉讼")))).toEqual(scored(await fresh.engine.search(bm25("kb_a", "检察 诉讼"))));
      expect(scored(await engine.search(bm25("kb_b", "sails 7"))).map((hit) => hit.id)[0]).toBe("b-7");
      // The vectors were not touched, and the disabled document stays disabled.
      const vector = await engine.search({ ...bm25("kb_a"), mode: "vector", vector: new Float32Array([0, 0, 0, 1]), topK: 20 });
      expect(vector.map((hit) => hit.chunk.id)).not.toContain("a-off");
      expect(vector).toHaveLength(7);
      await engine.setDocumentEnabled("kb_a", "doc_off", true);
      expect((await engine.search(bm25("kb_a", "hailstorm"))).map((hit) => hit.chunk.id)).toEqual(["a-off"]);

      // Writes after the split go to the base's own table: a replaced document, a deleted one, a dropped base.
      await engine.replaceDocumentChunks("kb_a", "doc_law", "doc_law.txt", [toEmbedded("kb_a", { ...baseA()[6], id: "a-zh2", text: "人民法院审理民事案件。" })]);
      expect(await engine.search(bm25("kb_a", "检察"))).toEqual([]);
      expect((await engine.search(bm25("kb_a", "法院"))).map((hit) => hit.chunk.id)).toEqual(["a-zh2"]);
      await engine.deleteDocument("kb_a", "doc_weather");
      expect(await engine.search(bm25("kb_a", "quokka"))).toEqual([]);
      await engine.dropKnowledgeBase("kb_b");
    } finally {
      await engine.close();
      await fresh.close();
    }

    const db = openDatabase(file);
    try {
      expect(schemaVersion(db)).toBeGreaterThanOrEqual(4);
      expect(db.prepare(`SELECT COUNT(*) AS n FROM index_schema_version WHERE version = 4`).get()).toEqual({ n: 1 });
      const names = tables(db);
      expect(names).not.toContain("chunks_fts");
      expect(names).toContain("fts_kb_a");
      expect(names.filter((name) => name.startsWith("fts_kb_b"))).toEqual([]);
      expect(db.prepare(`SELECT knowledge_base_id, keyword_table FROM search_spaces`).all()).toEqual([{ knowledge_base_id: "kb_a", keyword_table: "fts_kb_a" }]);
    } finally {
      db.close();
    }
  });

  it("says how many chunks of how many bases it re-indexes before it starts and how long it took once done, and fills each base's table with that base's chunks only", () => {
    const file = oldDataDir();
    const { logger, lines } = capturedLogger();
    const db = openDatabase(file, { logger });
    try {
      const chunks = baseA().length + baseB().length;
      expect(lines.map((line) => line.msg)).toEqual([
        `upgrading the index to one keyword table per knowledge base (once): re-indexing ${chunks} chunk(s) of 2 knowledge base(s) before the index serves`,
        expect.stringMatching(new RegExp(`^keyword index upgraded: ${chunks} chunk\\(s\\) in 2 per-base table\\(s\\) in \\d+\\.\\d s$`)),
      ]);
      expect(lines[0]).toMatchObject({ level: 30, knowledgeBases: 2, chunks });
      expect(lines[1]).toMatchObject({ level: 30, knowledgeBases: 2, chunks, ms: expect.any(Number) });
      expect(lines[1].ms).toBeGreaterThanOrEqual(0);

      // Each table holds its own base's chunks under their rowids, and their terms: no more, no fewer.
      const rowids = (sql: string, ...params: string[]) => (db.prepare(sql).all(...params) as { rowid: number }[]).map((r) => r.rowid);
      for (const kb of ["kb_a", "kb_b"]) {
        const table = (db.prepare(`SELECT keyword_table FROM search_spaces WHERE knowledge_base_id = ?`).get(kb) as { keyword_table: string }).keyword_table;
        expect(rowids(`SELECT rowid FROM "${table}" ORDER BY rowid`)).toEqual(rowids(`SELECT rowid FROM chunks WHERE knowledge_base_id = ? ORDER BY rowid`, kb));
      }
      const sails = rowids(`SELECT rowid FROM chunks WHERE knowledge_base_id = 'kb_b' ORDER BY rowid`);
      expect(rowids(`SELECT rowid FROM fts_kb_b WHERE fts_kb_b MATCH 'sails' ORDER BY rowid`)).toEqual(sails);
      expect(rowids(`SELECT rowid FROM fts_kb_a WHERE fts_kb_a MATCH 'sails'`)).toEqual([]);
      expect(rowids(`SELECT rowid FROM fts_kb_a WHERE fts_kb_a MATCH 'hailstorm'`)).toEqual(rowids(`SELECT rowid FROM chunks WHERE id = 'a-off'`));
    } finally {
      db.close();
    }

    // Opened again, or a new file: nothing to move, nothing said.
    const quiet = capturedLogger();
    openDatabase(file, { logger: quiet.logger }).close();
    const dir = mkdtempSync(join(tmpdir(), "quarry-split-fts-"));
    dirs.push(dir);
    openDatabase(join(dir, "quarry.db"), { logger: quiet.logger }).close();
    expect(quiet.lines).toEqual([]);
  });

  it("opens a split file again without splitting it again", async () => {
    const file = oldDataDir();
    const first = new SqliteSearchEngine(openDatabase(file), { ownsDatabase: true });
    const before = scored(await first.search(bm25("kb_a")));
    await first.close();
    const again = new SqliteSearchEngine(openDatabase(file), { ownsDatabase: true });
    try {
      expect(scored(await again.search(bm25("kb_a")))).toEqual(before);
      expect(scored(await again.search({ ...bm25("kb_a", "zephyr"), topK: 100 })).map((hit) => hit.id)).toEqual(["a-0"]);
    } finally {
      await again.close();
    }
  });

  it("leaves the file as it was when the split fails part way, and splits it once the cause is gone", async () => {
    // A chunk row the split cannot read (its heading path is not JSON), after kb_a's rows were split.
    const file = oldDataDir((db) => db.prepare(`UPDATE chunks SET section_path = 'not json' WHERE id = 'b-39'`).run());
    const { logger, lines } = capturedLogger();
    expect(() => openDatabase(file, { logger })).toThrow(SyntaxError);
    // It said it started, and does not claim to have finished.
    expect(lines.map((line) => String(line.msg))).toEqual([expect.stringMatching(/^upgrading the index/)]);

    const raw = new Database(file);
    try {
      sqliteVec.load(raw);
      expect(schemaVersion(raw)).toBe(3);
      expect(tables(raw)).toContain("chunks_fts");
      expect(tables(raw).filter((name) => name.startsWith("fts_"))).toEqual([]);
      expect((raw.prepare(`PRAGMA table_info(search_spaces)`).all() as { name: string }[]).map((c) => c.name)).not.toContain("keyword_table");
      raw.prepare(`UPDATE chunks SET section_path = '[]' WHERE id = 'b-39'`).run();
    } finally {
      raw.close();
    }

    const engine = new SqliteSearchEngine(openDatabase(file), { ownsDatabase: true });
    try {
      expect(scored(await engine.search(bm25("kb_a"))).map((hit) => hit.id)).toEqual(["a-0", "a-1", "a-3"]);
    } finally {
      await engine.close();
    }
  });
});
