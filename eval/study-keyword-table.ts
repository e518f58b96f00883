// The hand-run studies rebuild a base's keyword index in memory (to vary what goes into it) and must
// score it exactly as SqliteSearchEngine scores a base's keyword table, or their figures would drift
// from the pipeline's: same FTS5 table, same weighted BM25 statement (space-tables.ts).
import type Database from "better-sqlite3";
import { averageRowLength, weightedQueryTerms, bm25Parameters, bm25ScoresSql, createKeywordTable } from "../services/index/lab.ts";
import { keywordIndexSize } from "../services/index/index.ts";

export interface KeywordScore {
  rowid: number;
  score: number;
}

/** An in-memory keyword table: add pre-segmented terms by rowid, then search it with questions. */
export class StudyKeywordTable {
  private readonly statements = new Map<number, Database.Statement>();
  private readonly insert: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly table = "keyword_study",
  ) {
    createKeywordTable(db, table);
    this.insert = db.prepare(`INSERT INTO "${table}" (rowid, terms) VALUES (?, ?)`);
  }

  /** Adds rows in one transaction. */
  addAll(rows: Iterable<{ rowid: number; terms: string }>): void {
    this.db.transaction(() => {
      for (const { rowid, terms } of rows) this.insert.run(rowid, terms);
    })();
  }

  /** The question's best rows, best first (ties by rowid); none for a question without searchable words. */
  search(question: string, limit: number, stopWords?: ReadonlySet<string>): KeywordScore[] {
    const groups = weightedQueryTerms(question, averageRowLength([keywordIndexSize(this.db, this.table)]), stopWords);
    if (groups.length === 0) return [];
    let statement = this.statements.get(groups.length);
    if (!statement) {
      statement = this.db.prepare(`${bm25ScoresSql(this.table, groups.length)} ORDER BY score DESC, rowid LIMIT @limit`);
      this.statements.set(groups.length, statement);
    }
    return statement.all({ ...bm25Parameters(groups), limit }) as KeywordScore[];
  }
}
