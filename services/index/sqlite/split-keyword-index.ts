// Schema step 4: the one FTS5 table every knowledge base shared (chunks_fts) becomes one keyword
// table per base (space-tables.ts says why). The old table is contentless, so its terms cannot be
// read back: each base's chunks are segmented again from their stored text and heading path —
// exactly what replaceDocumentChunks indexes — under the same rowids, then the old table is dropped.
// It runs inside the migration's write transaction, so a file is split whole or not at all, once.
// Segmenting every chunk again can take minutes on a large file at its first start on this version,
// so it says what it is about to do and, once done, how long it took.
import { performance } from "node:perf_hooks";
import type Database from "better-sqlite3";
import type { Logger } from "../../../lib/logger.ts";
import { createKeywordTable, keywordTableName, keywordTerms } from "./space-tables.ts";

/** Rows segmented and written per statement batch, so a large base is not held in memory at once. */
const PAGE_SIZE = 1_000;

export function splitKeywordIndex(db: Database.Database, logger: Logger): void {
  db.exec(`ALTER TABLE search_spaces ADD COLUMN keyword_table TEXT`);
  db.exec(`CREATE UNIQUE INDEX IF NOT EXISTS search_spaces_by_keyword_table ON search_spaces (keyword_table)`);
  const spaces = db.prepare(`SELECT knowledge_base_id FROM search_spaces`).all() as { knowledge_base_id: string }[];
  // A new file (no knowledge base yet) has nothing to move and nothing worth saying.
  const moving = spaces.length > 0 ? movingCounts(db) : undefined;
  const started = performance.now();
  if (moving) {
    logger.info(
      moving,
      `upgrading the index to one keyword table per knowledge base (once): re-indexing ${moving.chunks} chunk(s) of ${moving.knowledgeBases} knowledge base(s) before the index serves`,
    );
  }
  const inserts = new Map<string, Database.Statement<[number, string]>>();
  const name = db.prepare(`UPDATE search_spaces SET keyword_table = ? WHERE knowledge_base_id = ?`);
  for (const { knowledge_base_id: knowledgeBaseId } of spaces) {
    const table = keywordTableName(knowledgeBaseId);
    createKeywordTable(db, table);
    name.run(table, knowledgeBaseId);
    inserts.set(knowledgeBaseId, db.prepare<[number, string]>(`INSERT INTO "${table}" (rowid, terms) VALUES (?, ?)`));
  }
  // Pages along the rowid key (a write cannot run while a statement is still being read); a chunk
  // of a base without a search space was never searchable and gets no terms.
  const page = db.prepare(`SELECT rowid, knowledge_base_id, text, section_path FROM chunks WHERE rowid > ? ORDER BY rowid LIMIT ?`);
  for (let after = 0; ; ) {
    const rows = page.all(after, PAGE_SIZE) as { rowid: number; knowledge_base_id: string; text: string; section_path: string }[];
    if (rows.length === 0) break;
    for (const row of rows) inserts.get(row.knowledge_base_id)?.run(row.rowid, keywordTerms(row.text, JSON.parse(row.section_path) as string[]));
    after = rows[rows.length - 1].rowid;
  }
  db.exec(`DROP TABLE IF EXISTS chunks_fts`);
  if (moving) {
    const ms = Math.round(performance.now() - started);
    logger.info({ ...moving, ms }, `keyword index upgraded: ${moving.chunks} chunk(s) in ${moving.knowledgeBases} per-base table(s) in ${(ms / 1000).toFixed(1)} s`);
  }
}

/** What the split re-indexes: the chunks of bases that have a search space (the others get no terms). */
function movingCounts(db: Database.Database): { knowledgeBases: number; chunks: number } {
  return db
    .prepare(
      `SELECT (SELECT COUNT(*) FROM search_spaces) AS knowledgeBases,
              (SELECT COUNT(*) FROM chunks WHERE knowledge_base_id IN (SELECT knowledge_base_id FROM search_spaces)) AS chunks`,
    )
    .get() as { knowledgeBases: number; chunks: number };
}
