// BM25 on SQLite after deletes: a base that deleted and re-ingested documents 1,000 times scores
// every chunk exactly as a fresh base holding the same chunks does (FTS5's 'delete' command takes a
// chunk's terms out of the row count, the term total and the document frequencies), and a file whose
// keyword tables were made with contentless_delete, and drifted, is rebuilt exact by migration 5.
import { describe, expect, it } from "vitest";
import type { EmbeddedChunk, SearchQuery } from "../../../lib/domain.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";
import { migrate, schemaVersion } from "./open-database.ts";
import { SqliteSearchEngine } from "./sqlite-search-engine.ts";
import { keywordIndexSize, keywordTerms } from "./space-tables.ts";

const WORDS = ["harbour", "ferry", "tide", "lighthouse", "keeper", "lens", "reef", "storm", "pier", "island", "gull", "anchor", "sail", "rope", "chart"];
const QUESTIONS = ["ferry to the island", "lighthouse keeper lens", "storm over the reef", "anchor rope sail chart", "gull pier harbour tide"];

/** A document's chunks for version v: words drawn by a fixed rule, so both bases can be given the same. */
function chunksOf(kb: string, doc: number, version: number): EmbeddedChunk[] {
  return Array.from({ length: 1 + ((doc + version) % 3) }, (_, index) => {
    const text = Array.from({ length: 6 + ((doc * 7 + version * 3 + index) % 11) }, (_, w) => WORDS[(doc * 31 + version * 17 + index * 5 + w * w) % WORDS.length]).join(" ");
    return { id: `${kb}-d${doc}-v${version}-c${index}`, documentId: `d${doc}`, knowledgeBaseId: kb, index, text, tokenCount: 10, page: 0, pageEnd: 0, sectionPath: [], start: 0, end: text.length, vector: new Float32Array([1, doc, version, index]) };
  });
}

const query = (kb: string, text: string): SearchQuery => ({ knowledgeBaseIds: [kb], text, mode: "bm25", topK: 1000, minScore: 0, documentIds: [] });

/** Every hit as its document, position and exact score: what must not depend on the base's history. */
async function scores(engine: SqliteSearchEngine, kb: string): Promise<string[][]> {
  const out: string[][] = [];
  for (const question of QUESTIONS) {
    const hits = await engine.search(query(kb, question));
    out.push(hits.map((h) => `${h.chunk.documentId}#${h.chunk.index} ${h.score}`).sort());
  }
  return out;
}

describe("exact BM25 statistics after deletes (SQLite)", () => {
  it("scores a base after 1,000 deletes and re-ingests exactly as a fresh base with the same chunks", async () => {
    const { db, cleanup } = openTestDatabase();
    const engine = new SqliteSearchEngine(db);
    try {
      await engine.ensureKnowledgeBase("kb_churned", 4);
      await engine.ensureKnowledgeBase("kb_fresh", 4);
      const DOCS = 120;
      const live = new Map<number, number>();
      for (let doc = 0; doc < DOCS; doc++) {
        await engine.replaceDocumentChunks("kb_churned", `d${doc}`, `d${doc}.txt`, chunksOf("kb_churned", doc, 0));
        live.set(doc, 0);
      }
      for (let i = 1; i <= 1000; i++) {
        const doc = (i * 37) % DOCS;
        if (i % 3 === 0) {
          await engine.deleteDocument("kb_churned", `d${doc}`);
          live.delete(doc);
        } else {
          await engine.replaceDocumentChunks("kb_churned", `d${doc}`, `d${doc}.txt`, chunksOf("kb_churned", doc, i));
          live.set(doc, i);
        }
      }
      for (const [doc, version] of live) await engine.replaceDocumentChunks("kb_fresh", `d${doc}`, `d${doc}.txt`, chunksOf("kb_fresh", doc, version));

      const churned = keywordIndexSize(db, keywordTable(db, "kb_churned"));
      const fresh = keywordIndexSize(db, keywordTable(db, "kb_fresh"));
      expect(churned).toEqual(fresh);
      expect(churned.rows).toBe((db.prepare(`SELECT COUNT(*) AS n FROM chunks WHERE knowledge_base_id = 'kb_churned'`).get() as { n: number }).n);
      const expected = await scores(engine, "kb_fresh");
      expect(expected.flat().length).toBeGreaterThan(50);
      expect(await scores(engine, "kb_churned")).toEqual(expected);
    } finally {
      await engine.close();
      await cleanup();
    }
  }, 120_000);

  it("rebuilds a keyword table made with contentless_delete, whose totals still counted deleted chunks", async () => {
    const { db, cleanup } = openTestDatabase();
    try {
      const engine = new SqliteSearchEngine(db, { ownsDatabase: false });
      await engine.ensureKnowledgeBase("kb_old", 4);
      for (let doc = 0; doc < 30; doc++) await engine.replaceDocumentChunks("kb_old", `d${doc}`, `d${doc}.txt`, chunksOf("kb_old", doc, 0));
      const table = keywordTable(db, "kb_old");
      // As Quarry before schema 5 made it and deleted from it: the same rows, then 10 documents gone.
      db.exec(`DROP TABLE "${table}"`);
      db.exec(`CREATE VIRTUAL TABLE "${table}" USING fts5(terms, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2')`);
      const rows = db.prepare(`SELECT rowid, document_id, text, section_path FROM chunks WHERE knowledge_base_id = 'kb_old'`).all() as { rowid: number; document_id: string; text: string; section_path: string }[];
      for (const row of rows) db.prepare(`INSERT INTO "${table}" (rowid, terms) VALUES (?, ?)`).run(row.rowid, keywordTerms(row.text, JSON.parse(row.section_path) as string[]));
      const gone = rows.filter((row) => Number(row.document_id.slice(1)) < 10);
      for (const row of gone) {
        db.prepare(`DELETE FROM "${table}" WHERE rowid = ?`).run(row.rowid);
        db.prepare(`DELETE FROM chunks WHERE rowid = ?`).run(row.rowid);
      }
      // The drift: the deleted rows still counted.
      expect(keywordIndexSize(db, table).rows).toBe(rows.length);
      // Back to before schema 6 and up to it again (later migrations, already applied, are not run twice).
      db.prepare(`DELETE FROM index_schema_version WHERE version >= 6`).run();
      migrate(db, 6);
      expect(schemaVersion(db)).toBe(6);
      expect((db.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).get(table) as { sql: string }).sql).not.toMatch(/contentless_delete/);
      expect(keywordIndexSize(db, table).rows).toBe(rows.length - gone.length);
      // And searches still find the chunks that are left.
      expect((await engine.search(query("kb_old", QUESTIONS[0]))).length).toBeGreaterThan(0);
      await engine.close();
    } finally {
      await cleanup();
    }
  });
});

function keywordTable(db: ReturnType<typeof openTestDatabase>["db"], kb: string): string {
  return (db.prepare(`SELECT keyword_table FROM search_spaces WHERE knowledge_base_id = ?`).get(kb) as { keyword_table: string }).keyword_table;
}
