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
import type { KeywordIndexSize, WeightedTerms } from "../search/query-terms.ts";
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
 * Contentless: the raw text lives in chunks; the index holds the segmented terms only. A chunk's
 * row is removed with FTS5's 'delete' command and its terms (deleteKeywordRow), not with
 * contentless_delete: a contentless_delete table never takes a deleted row out of its row count and
 * term total, so a base that deleted or re-ingested much scored BM25 unlike a fresh one.
 * porter stems English terms ("citations" → "citation") on both sides, as MATCH strings go
 * through the same tokenizer; it leaves the segmented Chinese terms as they are.
 */
export function createKeywordTable(db: Database.Database, table: string): void {
  db.exec(
    `CREATE VIRTUAL TABLE IF NOT EXISTS "${table}" USING fts5(
       terms,
       content = '',
       tokenize = 'porter unicode61 remove_diacritics 2'
     )`,
  );
}

/**
 * Removes a chunk's row from a keyword table, its terms out of every total. The terms must be those
 * the row was written with: keywordTerms of the chunk's stored text and heading path.
 */
export function deleteKeywordRowSql(table: string): string {
  return `INSERT INTO "${table}" ("${table}", rowid, terms) VALUES ('delete', ?, ?)`;
}

/** Rows segmented and written per statement batch, so a large base is not held in memory at once. */
const REINDEX_PAGE_SIZE = 1_000;

/**
 * Writes every stored chunk's terms into its base's keyword table, under its rowid (a migration
 * building keyword tables anew); chunks of bases with no entry in `inserts` are left out.
 */
export function reindexChunkTerms(db: Database.Database, inserts: ReadonlyMap<string, Database.Statement<[number, string]>>): void {
  // Pages along the rowid key (a write cannot run while a statement is still being read).
  const page = db.prepare(`SELECT rowid, knowledge_base_id, text, section_path FROM chunks WHERE rowid > ? ORDER BY rowid LIMIT ?`);
  for (let after = 0; ; ) {
    const rows = page.all(after, REINDEX_PAGE_SIZE) as { rowid: number; knowledge_base_id: string; text: string; section_path: string }[];
    if (rows.length === 0) break;
    for (const row of rows) inserts.get(row.knowledge_base_id)?.run(row.rowid, keywordTerms(row.text, JSON.parse(row.section_path) as string[]));
    after = rows[rows.length - 1].rowid;
  }
}

/** What a chunk's row in its keyword table holds: its text under its heading path, word-segmented. */
export function keywordTerms(text: string, sectionPath: readonly string[]): string {
  return segmentForIndex(withHeadingPath(text, sectionPath));
}

/**
 * One knowledge base's BM25 list over a question's terms in `groups` weight groups (query-terms.ts);
 * parameters as bm25ScoresSql's, plus @documents (JSON ids, or null for all) and @limit.
 */
export function bm25Sql(keywordTable: string, groups = 1): string {
  return `SELECT c.*, scored.score
  FROM (${bm25ScoresSql(keywordTable, groups)}) AS scored JOIN chunks c ON c.rowid = scored.rowid
  WHERE c.enabled = 1
    AND (@documents IS NULL OR c.document_id IN (SELECT value FROM json_each(@documents)))
  ORDER BY scored.score DESC, c.id
  LIMIT @limit`;
}

/**
 * The rowid and weighted BM25 score of every row of a keyword table that matches the question, its
 * terms in `groups` weight groups; parameters @match0, @weight0, … (bm25Parameters). bm25() is
 * negative with smaller meaning better; negated it is a positive score, larger better. FTS5 has no
 * per-term weight, but bm25() is a sum over the query's terms, each with its own idf, so the groups'
 * scores, each times its weight, add up to the weighted score. A group's matches are materialized
 * because bm25() cannot be read inside the aggregate that adds them.
 */
export function bm25ScoresSql(keywordTable: string, groups: number): string {
  const table = `"${keywordTable}"`;
  const group = (i: number) => `SELECT rowid, -bm25(${table}) * @weight${i} AS score FROM ${table} WHERE ${table} MATCH @match${i}`;
  if (groups === 1) return group(0);
  const indexes = Array.from({ length: groups }, (_, i) => i);
  return `WITH ${indexes.map((i) => `g${i} AS MATERIALIZED (${group(i)})`).join(", ")}
    SELECT rowid, SUM(score) AS score FROM (${indexes.map((i) => `SELECT rowid, score FROM g${i}`).join(" UNION ALL ")}) GROUP BY rowid`;
}

/**
 * How many rows a keyword table holds and how many terms in all: the totals FTS5's bm25() takes its
 * average row length from. FTS5 keeps them in its "averages" record (rowid 1 of the table's _data
 * shadow table: the row count, then each column's term total, as SQLite varints); only an FTS5
 * auxiliary function could ask for them otherwise, and better-sqlite3 cannot register one. A table
 * nothing was ever written to has no record yet.
 */
export function keywordIndexSize(db: Pick<Database.Database, "prepare">, keywordTable: string): KeywordIndexSize {
  const row = db.prepare(`SELECT block FROM "${keywordTable}_data" WHERE id = 1`).get() as { block: Buffer } | undefined;
  if (!row || row.block.length === 0) return { rows: 0, terms: 0 };
  const [rows, terms] = sqliteVarints(row.block, 2);
  return { rows, terms };
}

/**
 * The first `count` SQLite varints of a buffer: big-endian, 7 bits a byte with the high bit set on
 * all but the last, and a ninth byte, if reached, carrying 8 bits.
 */
export function sqliteVarints(buffer: Uint8Array, count: number): number[] {
  const values: number[] = [];
  let at = 0;
  while (values.length < count && at < buffer.length) {
    let value = 0;
    for (let i = 0; ; i++) {
      const byte = buffer[at++];
      if (i === 8) {
        value = value * 256 + byte;
        break;
      }
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    values.push(value);
  }
  return values;
}

/** bm25Sql's parameters for a question's weight groups. */
export function bm25Parameters(groups: readonly WeightedTerms[]): Record<string, string | number> {
  const parameters: Record<string, string | number> = {};
  groups.forEach(({ terms, weight }, i) => {
    parameters[`match${i}`] = ftsOr(terms);
    parameters[`weight${i}`] = weight;
  });
  return parameters;
}

/** Quotes every term and ORs them: user text can never form FTS5 syntax (or a syntax error). */
function ftsOr(terms: readonly string[]): string {
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(" OR ");
}
