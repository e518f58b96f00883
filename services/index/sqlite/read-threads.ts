// Runs the embedded search engine's reads (searches, chunks by id or position, text finds) on a
// pool of worker threads (piscina), each with its own read-only connection to the same SQLite file.
// better-sqlite3 is synchronous: on the thread that answers calls, 32 concurrent searches queued one
// behind another and held up every other call of the process (ingest, the gateway) while they ran;
// here they run on both cores, and the writer (the index's single connection on the main thread)
// keeps writing between them, WAL letting each reader see the last commit. Writes stay on the main
// thread: a write that returned is committed, so a read sent after it sees it.
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { errorFromThread, UnavailableError } from "../../../lib/errors.ts";
import { replaySteps, tracingOn } from "../../../lib/tracing/spans.ts";
import type { RecordedStep } from "../../../lib/tracing/thread-steps.ts";
import type { Chunk, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import type { ChunkFind, ChunkFindRequest } from "../search/chunk-text-find.ts";
import type { ChunkPosition } from "../search/search-engine.ts";
import type { ApproximateKnnOptions } from "./approximate-knn.ts";

/** One read of the engine, named by its method and carrying its argument. */
export type ReadCall =
  | { method: "search"; query: SearchQuery }
  | { method: "getChunks"; ids: string[] }
  | { method: "getChunksAt"; positions: ChunkPosition[] }
  | { method: "findChunks"; request: ChunkFindRequest };

export type ReadTask = ReadCall & { file: string; vectorIndex: ApproximateKnnOptions; /** Record the read's steps for the caller's trace. */ traced: boolean };

export type ReadValue = SearchHit[] | Chunk[] | ChunkFind;

export type ReadResult = ({ value: ReadValue } | { error: { name: string; message: string; reason?: string } }) & { steps?: RecordedStep[] };


export interface ReadThreadsOptions {
  /** The database file (already opened and migrated by the writer). */
  file: string;
  vectorIndex: ApproximateKnnOptions;
  /** Threads, each with its own connection and its own copy of the loaded vector indexes. */
  threads: number;
}

/** QUARRY_INDEX_READ_THREADS: the machines this runs on have two cores; 0 reads on the main thread. */
export const DEFAULT_READ_THREADS = 2;

export class SqliteReadThreads {
  readonly #pool: Piscina<ReadTask, ReadResult>;
  readonly #file: string;
  readonly #vectorIndex: ApproximateKnnOptions;

  constructor(options: ReadThreadsOptions) {
    this.#file = options.file;
    this.#vectorIndex = options.vectorIndex;
    const threads = Math.max(1, options.threads);
    this.#pool = new Piscina({
      filename: fileURLToPath(new URL("./read-thread-entry.mjs", import.meta.url)),
      // Kept alive: a thread holds its connection and the vector indexes it loaded.
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.MAX_SAFE_INTEGER,
    });
  }

  async read<V extends ReadValue>(call: ReadCall): Promise<V> {
    let result: ReadResult;
    try {
      result = await this.#pool.run({ ...call, file: this.#file, vectorIndex: this.#vectorIndex, traced: tracingOn() });
    } catch (error) {
      // The pool closed, or the thread could not start or died (its module failed to load).
      throw new UnavailableError(`the index's read thread failed: ${(error as Error).message}`);
    }
    replaySteps(result.steps);
    if ("error" in result) throw errorFromThread(result.error);
    return result.value as V;
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}
