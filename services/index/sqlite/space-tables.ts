// The tables the embedded search engine keeps for each knowledge base, and their names: a vec0 table
// for chunk vectors (one per base since vectors of different dimensions cannot share a column) and an
// FTS5 table for BM25. The keyword table is per base because FTS5's bm25() takes its statistics —
// the row count, the average row length and each term's document frequency — from the whole table:
// one table for every base made a base's scores and order move whenever another base grew. With a
// table per base they are the base's own, as with OpenSearch's and Elasticsearch's index per base.
// The migration that split the old shared table (split-keyword-index.ts) builds tables with these
// definitions too.
import { createHash } from "node:crypto";
import { withHeadingPath } from "../../../lib/chunk-context.ts";
import { segmentForIndex } from "../search/text-segmenter.ts";
import type Database from "better-sqlite3";

/** The chunk-vector table of a knowledge base, before any change of model renames it. */
export function vectorTableName(knowledgeBaseId: string): string {
  return spaceTableName("vec", knowledgeBaseId);
}

/** The FTS5 table holding a knowledge base's chunk terms. */
export function keywordTableName(knowledgeBaseId: string): string {
  return spaceTableName("fts", knowledgeBaseId);
}

function spaceTableName(prefix: string, knowledgeBaseId: string): string {
  // Ids are meant to be kb_<hex>; anything else is hashed so the name stays a plain identifier.
  if (/^[A-Za-z0-9_]{1,64}$/.test(knowledgeBaseId)) return `${prefix}_${knowledgeBaseId}`;
  return `${prefix}_h${createHash("sha256").update(knowledgeBaseId).digest("hex").slice(0, 32)}`;
}

/**
 * Creates a knowledge base's keyword table (if missing), keyed by the chunk rowids.
 * Contentless: the raw text lives in chunks; the index holds the segmented terms only.
 * contentless_delete lets a chunk's row be removed without re-supplying its terms.
 * porter stems English terms ("citations" → "citation") on both sides, as MATCH strings go
 * through the same tokenizer; it leaves the segmented Chinese terms as they are.
 */
export function createKeywordTable(db: Database.Database, table: string): void {
  db.exec(
    `CREATE VIRTUAL TABLE IF NOT EXISTS "${table}" USING fts5(
       terms,
       content = '',
       contentless_delete = 1,
       tokenize = 'porter unicode61 remove_diacritics 2'
     )`,
  );
}

/** What a chunk's row in its keyword table holds: its text under its heading path, word-segmented. */
export function keywordTerms(text: string, sectionPath: readonly string[]): string {
  return segmentForIndex(withHeadingPath(text, sectionPath));
}

/**
 * One knowledge base's BM25 list; parameters @match, @documents (JSON ids, or null for all) and @limit.
 * bm25() is negative with smaller meaning better; negated it is a positive score, larger better.
 */
export function bm25Sql(keywordTable: string): string {
  return `SELECT c.*, -bm25("${keywordTable}") AS score
  FROM "${keywordTable}" JOIN chunks c ON c.rowid = "${keywordTable}".rowid
  WHERE "${keywordTable}" MATCH @match
    AND c.enabled = 1
    AND (@documents IS NULL OR c.document_id IN (SELECT value FROM json_each(@documents)))
  ORDER BY score DESC, c.id
  LIMIT @limit`;
}
