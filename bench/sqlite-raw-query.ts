// The embedded engine's raw query, in two steps so it can run on the bench's main-thread connection
// or on a thread's own (raw-sql-threads.ts): plan (the statements' text and parameters, worked out
// once per query and structured-clone safe) and run (only the statements, as the engine sends them:
// FTS5 BM25, sqlite-vec kNN, the chunk rows; hybrid in one read transaction, as the engine takes).
import type { RetrievalMode, SearchQuery } from "../lib/domain.ts";
import { keywordIndexSize, type SqliteDatabase } from "../services/index/index.ts";
import { averageRowLength, bm25Parameters, bm25Sql, CHUNKS_BY_ROWID_SQL, hybridCandidates, knnSql, weightedQueryTerms } from "../services/index/lab.ts";

export interface SqliteRawPlan {
  mode: RetrievalMode;
  bm25Sql: string;
  /** Absent when the question has no searchable term (the engine sends no BM25 statement then). */
  bm25Parameters?: Record<string, string | number | null>;
  knnSql: string;
  vector?: Float32Array;
  /** BM25 and kNN depth: top k, or hybrid's candidates. */
  limit: number;
}

export function planSqliteRaw(db: SqliteDatabase, query: SearchQuery): SqliteRawPlan {
  const space = db.prepare(`SELECT vector_table, keyword_table FROM search_spaces WHERE knowledge_base_id = ?`).get(query.knowledgeBaseIds[0]) as
    | { vector_table: string; keyword_table: string }
    | undefined;
  if (!space) throw new Error(`knowledge base ${query.knowledgeBaseIds[0]} has no search tables`);
  const groups = weightedQueryTerms(query.text, averageRowLength([keywordIndexSize(db, space.keyword_table)]));
  const limit = query.mode === "hybrid" ? hybridCandidates(query) : query.topK;
  return {
    mode: query.mode,
    bm25Sql: bm25Sql(space.keyword_table, Math.max(groups.length, 1)),
    bm25Parameters: groups.length > 0 ? { ...bm25Parameters(groups), documents: null, limit } : undefined,
    knnSql: knnSql(space.vector_table, false),
    vector: query.vector,
    limit,
  };
}

/** Prepared statements by text, per connection: prepared once, as the main-thread raw prepares per query. */
const prepared = new WeakMap<SqliteDatabase, Map<string, ReturnType<SqliteDatabase["prepare"]>>>();

function statement(db: SqliteDatabase, sql: string): ReturnType<SqliteDatabase["prepare"]> {
  let cache = prepared.get(db);
  if (!cache) prepared.set(db, (cache = new Map()));
  let found = cache.get(sql);
  if (!found) cache.set(sql, (found = db.prepare(sql)));
  return found;
}

/** Runs the plan's statements; returns the row count, so nothing large crosses a thread. */
export function runSqliteRaw(db: SqliteDatabase, plan: SqliteRawPlan): number {
  const bm25 = () => (plan.bm25Parameters ? statement(db, plan.bm25Sql).all(plan.bm25Parameters).length : 0);
  const knn = () => {
    const vector = plan.vector!;
    const blob = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    const neighbours = (statement(db, plan.knnSql) as { all(...parameters: unknown[]): unknown[] }).all(blob, BigInt(plan.limit)) as { rowid: number }[];
    return statement(db, CHUNKS_BY_ROWID_SQL).all(JSON.stringify(neighbours.map((n) => n.rowid))).length;
  };
  if (plan.mode === "bm25") return bm25();
  if (plan.mode === "vector") return knn();
  return db.transaction(() => bm25() + knn())();
}
