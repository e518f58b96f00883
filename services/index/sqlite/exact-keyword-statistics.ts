// Schema step 5: every keyword table made with contentless_delete (space-tables.ts says why no
// longer) is built again without it, from its base's stored chunks under the same rowids, so its
// BM25 statistics count only the chunks that are there. Inside the migration's write transaction:
// a file is rebuilt whole or not at all, once; it says what it does, since a large file takes a while.
import { performance } from "node:perf_hooks";
import type Database from "better-sqlite3";
import type { Logger } from "../../../lib/logger.ts";
import { createKeywordTable, reindexChunkTerms } from "./space-tables.ts";

export function rebuildKeywordTables(db: Database.Database, logger: Logger): void {
  const spaces = db.prepare(`SELECT knowledge_base_id, keyword_table FROM search_spaces`).all() as { knowledge_base_id: string; keyword_table: string }[];
  const definition = db.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`);
  const stale = spaces.filter((space) => /contentless_delete/i.test((definition.get(space.keyword_table) as { sql: string } | undefined)?.sql ?? ""));
  if (stale.length === 0) return;
  const started = performance.now();
  logger.info({ knowledgeBases: stale.length }, `rebuilding ${stale.length} keyword table(s) so BM25 counts deleted chunks no more (once)`);
  const inserts = new Map<string, Database.Statement<[number, string]>>();
  for (const { knowledge_base_id: knowledgeBaseId, keyword_table: table } of stale) {
    db.exec(`DROP TABLE "${table}"`);
    createKeywordTable(db, table);
    inserts.set(knowledgeBaseId, db.prepare<[number, string]>(`INSERT INTO "${table}" (rowid, terms) VALUES (?, ?)`));
  }
  reindexChunkTerms(db, inserts);
  const ms = Math.round(performance.now() - started);
  logger.info({ knowledgeBases: stale.length, ms }, `keyword tables rebuilt in ${(ms / 1000).toFixed(1)} s`);
}
