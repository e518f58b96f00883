// Runs the embedded search engine's reads (searches, chunks by id or position, text finds) on a
// pool of worker threads (piscina), each with its own read-only connection to the same SQLite file.
// better-sqlite3 is synchronous: on the thread that answers calls, 32 concurrent searches queued one
// behind another and held up every other call of the process (ingest, the gateway) while they ran;
// here they run on both cores, and the writer (the index's single connection on the main thread)
// keeps writing between them, WAL letting each reader see the last commit. Writes stay on the main
// thread: a write that returned is committed, so a read sent after it sees it.
//
// A read whose caller went away (a cancelled stream, a passed deadline) is dropped while it waits
// for a thread, so a burst of cancelled searches costs nothing but the queueing. The waiting is done
// here, not in piscina's queue: piscina drops a queued task on its `signal` too, but ends a running
// one by terminating its thread, and a thread holds its connection and the vector indexes it loaded
// (a restart loads them again, on the same two cores). So a read that has started runs to its end.
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { CancelledError, errorFromThread, UnavailableError } from "../../../lib/errors.ts";
import { replaySteps, spansKeptHere } from "../../../lib/tracing/spans.ts";
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

/** A read waiting for a thread: start() hands it one. */
interface Waiting {
  start(): void;
}

export class SqliteReadThreads {
  readonly #pool: Piscina<ReadTask, ReadResult>;
  readonly #file: string;
  readonly #vectorIndex: ApproximateKnnOptions;
  readonly #threads: number;
  /** Reads sent to the pool: at most one per thread, so none waits in piscina's queue. */
  #running = 0;
  /** Reads waiting for a thread, oldest first (a Set: a cancelled one leaves from anywhere in it). */
  readonly #waiting = new Set<Waiting>();
  #closed = false;

  constructor(options: ReadThreadsOptions) {
    this.#file = options.file;
    this.#vectorIndex = options.vectorIndex;
    const threads = Math.max(1, options.threads);
    this.#threads = threads;
    this.#pool = new Piscina({
      filename: fileURLToPath(new URL("./read-thread-entry.mjs", import.meta.url)),
      // Kept alive: a thread holds its connection and the vector indexes it loaded.
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.MAX_SAFE_INTEGER,
    });
  }

  /** Reads the threads ran to their end (piscina's count); a read dropped while waiting is not one. */
  get completed(): number {
    return this.#pool.completed;
  }

  /** Runs the read on a thread; CancelledError, without running it, if the signal fires while it waits. */
  async read<V extends ReadValue>(call: ReadCall, signal?: AbortSignal): Promise<V> {
    await this.#thread(call.method, signal);
    let result: ReadResult;
    try {
      result = await this.#pool.run({ ...call, file: this.#file, vectorIndex: this.#vectorIndex, traced: spansKeptHere() });
    } catch (error) {
      // The pool closed, or the thread could not start or died (its module failed to load).
      throw new UnavailableError(`the index's read thread failed: ${(error as Error).message}`);
    } finally {
      this.#release();
    }
    replaySteps(result.steps);
    if ("error" in result) throw errorFromThread(result.error);
    return result.value as V;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const waiting of [...this.#waiting]) waiting.start();
    await this.#pool.destroy();
  }

  /** Resolves when a thread is free for this read (taken), or rejects when its caller goes first. */
  #thread(what: string, signal?: AbortSignal): Promise<void> {
    const cancelled = () => new CancelledError(`${what}: the caller cancelled the request before a read thread was free`);
    if (signal?.aborted) return Promise.reject(cancelled());
    if (this.#closed) return Promise.reject(new UnavailableError(`${what}: the index's read threads are closed`));
    if (this.#running < this.#threads && this.#waiting.size === 0) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiting.delete(waiting);
        reject(cancelled());
      };
      const waiting: Waiting = {
        start: () => {
          this.#waiting.delete(waiting);
          signal?.removeEventListener("abort", onAbort);
          if (this.#closed) return reject(new UnavailableError(`${what}: the index's read threads are closed`));
          this.#running++;
          resolve();
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.add(waiting);
    });
  }

  /** A read ended: its thread goes to the oldest waiting read. */
  #release(): void {
    this.#running--;
    const next = this.#waiting.values().next();
    if (!next.done) next.value.start();
  }
}
