// Runs chunking on a pool of worker threads (piscina), so a large document never holds the event
// loop: while a 10 MB one-line file is split (about half a minute), the same process still answers
// calls, and the bus's lease heartbeat still runs. The limits are the parser threads' kind: threads,
// a heap per thread, and a time limit; a document over either fails with a reason naming the limit.
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { errorFromThread, TooLargeError, UnavailableError } from "../../lib/errors.ts";
import type { ChunkingResult, ChunkingTask } from "./chunking-thread.ts";

export type { ChunkingTask };

export interface ChunkingLimits {
  /** Documents split at once, one per thread (QUARRY_CHUNKER_THREADS). */
  threads: number;
  /** Heap one thread may use (QUARRY_CHUNK_MEMORY_MB). */
  memoryMb: number;
  /** Longest a document may wait and be split (QUARRY_CHUNK_TIMEOUT_MS), queue included. */
  timeoutMs: number;
}

export const DEFAULT_CHUNKING_LIMITS: ChunkingLimits = { threads: 2, memoryMb: 2048, timeoutMs: 300_000 };

export class ChunkingThreads {
  readonly #pool: Piscina<ChunkingTask, ChunkingResult>;
  readonly #limits: ChunkingLimits;

  constructor(limits: ChunkingLimits = DEFAULT_CHUNKING_LIMITS) {
    this.#limits = limits;
    this.#pool = new Piscina({
      filename: fileURLToPath(new URL("./chunking-thread-entry.mjs", import.meta.url)),
      minThreads: 0,
      maxThreads: Math.max(1, limits.threads),
      // A thread that sat idle this long is ended: its tokenizers are tens of MB.
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
      // Below the thread that answers calls: on a busy machine the scheduler serves it first, and
      // splitting takes what is left (piscina sets the thread's nice value through @napi-rs/nice).
      niceIncrement: 10,
    });
  }

  /** The task's encoded protobuf message (see ChunkingTask), or the typed error splitting raised. */
  async run(task: ChunkingTask, fileName: string): Promise<Uint8Array> {
    let result: ChunkingResult;
    try {
      result = await this.#pool.run(task, { signal: AbortSignal.timeout(this.#limits.timeoutMs) });
    } catch (error) {
      throw this.#failure(error as Error & { code?: string }, fileName);
    }
    if ("error" in result) throw errorFromThread(result.error);
    return result.bytes;
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }

  #failure(error: Error & { code?: string }, fileName: string): Error {
    if (error.name === "AbortError") {
      // A library's error (piscina's abort when the pool closes): its message is all it tells.
      if (/closed/.test(error.message)) return new UnavailableError("the chunker is shutting down");
      return new TooLargeError(`splitting ${fileName} took longer than ${this.#limits.timeoutMs} ms (QUARRY_CHUNK_TIMEOUT_MS); split the file into smaller ones or raise the limit`);
    }
    if (error.code === "ERR_WORKER_OUT_OF_MEMORY") {
      return new TooLargeError(`splitting ${fileName} needed more than ${this.#limits.memoryMb} MB of memory (QUARRY_CHUNK_MEMORY_MB)`);
    }
    // The thread could not start or died for another reason (its module failed to load): not the document's fault.
    return new UnavailableError(`the chunking thread failed: ${error.message}`);
  }
}
