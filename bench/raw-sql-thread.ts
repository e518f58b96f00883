// A raw-baseline thread: its own read-only connection to the store, running a raw plan's statements.
import { openReadOnlyDatabase, type SqliteDatabase } from "../services/index/index.ts";
import { runSqliteRaw, type SqliteRawPlan } from "./sqlite-raw-query.ts";

const connections = new Map<string, SqliteDatabase>();

export default function run(task: { file: string; plan: SqliteRawPlan }): number {
  let db = connections.get(task.file);
  if (!db) connections.set(task.file, (db = openReadOnlyDatabase(task.file)));
  return runSqliteRaw(db, task.plan);
}
