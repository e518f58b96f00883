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
import { createKeywordTable, keywordTableName, reindexChunkTerms } from "./space-tables.ts";

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
  // A chunk of a base without a search space was never searchable and gets no terms.
  reindexChunkTerms(db, inserts);
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
