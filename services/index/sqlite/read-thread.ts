// The worker-thread side of SqliteReadThreads: one read-only connection per database file, and a
// SqliteSearchEngine on it in the reader role, answering the engine's read calls. Errors come back
// by name and message (errorFromThread rebuilds them), since structured clone keeps no class.
import { QuarryError } from "../../../lib/errors.ts";
import { recordSteps } from "../../../lib/tracing/thread-steps.ts";
import type { ApproximateKnnOptions } from "./approximate-knn.ts";
import { openReadOnlyDatabase } from "./open-database.ts";
import { SqliteSearchEngine } from "./sqlite-search-engine.ts";
import type { ReadResult, ReadTask } from "./read-threads.ts";

const engines = new Map<string, SqliteSearchEngine>();

function engineFor(file: string, vectorIndex: ApproximateKnnOptions): SqliteSearchEngine {
  let engine = engines.get(file);
  if (!engine) engines.set(file, (engine = new SqliteSearchEngine(openReadOnlyDatabase(file), { ownsDatabase: true, vectorIndex, role: "reader" })));
  return engine;
}

export default async function read(task: ReadTask): Promise<ReadResult> {
  if (!task.traced) return answer(task);
  const { value, steps } = await recordSteps(() => answer(task));
  return { ...value, steps };
}

async function answer(task: ReadTask): Promise<ReadResult> {
  try {
    const engine = engineFor(task.file, task.vectorIndex);
    switch (task.method) {
      case "search":
        return { value: await engine.search(task.query) };
      case "getChunks":
        return { value: await engine.getChunks(task.ids) };
      case "getChunksAt":
        return { value: await engine.getChunksAt(task.positions) };
      case "findChunks":
        return { value: await engine.findChunks(task.request) };
    }
  } catch (error) {
    // A domain error keeps its kind; anything else (a bug) is reported as the backend failing.
    const kind = error instanceof QuarryError ? error.name : "UnavailableError";
    const reason = error instanceof QuarryError ? error.reason : undefined;
    return { error: { name: kind, message: (error as Error).message, ...(reason ? { reason } : {}) } };
  }
}
