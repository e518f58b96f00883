// Runs the built-in parsers on worker threads, so that no input can take the server down with it:
// a parser library's stray promise rejection, a stack overflow, an endless loop or a runaway
// allocation ends at most one thread. Each thread parses one document at a time under a heap limit
// (resourceLimits) and a time limit; a thread that dies or overruns is replaced on the next parse,
// and the document it held fails with a reason a person can read. Worker threads rather than
// child processes because a thread starts in a fraction of the time and its heap limit is enforced
// by V8 itself.
import { Worker } from "node:worker_threads";
import type { ParsedDocument } from "../../lib/domain.ts";
import { errorFromThread, InvalidInputError, type QuarryError, TooLargeError, UnavailableError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/logger.ts";
import type { DocumentParser, ParseInput } from "./document-parser.ts";
import type { ParseLimits } from "./parse-limits.ts";
import type { ParseResponse } from "./parser-thread.ts";

export interface IsolatedParserOptions {
  limits: ParseLimits;
  /** Documents parsed at once, one per thread. */
  threads: number;
  logger: Logger;
}

interface Job {
  input: ParseInput;
  resolve(parsed: ParsedDocument): void;
  reject(error: Error): void;
}

/** One thread and the document it is parsing. */
interface Slot {
  worker?: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
  /** Why the thread died, when it reported it before exiting. */
  death?: Error;
}

let nextId = 1;

export class IsolatedParser implements DocumentParser {
  readonly #options: IsolatedParserOptions;
  readonly #slots: Slot[];
  readonly #queue: Job[] = [];
  #closed = false;

  constructor(options: IsolatedParserOptions) {
    this.#options = options;
    this.#slots = Array.from({ length: Math.max(1, options.threads) }, () => ({}));
  }

  parse(input: ParseInput): Promise<ParsedDocument> {
    if (this.#closed) return Promise.reject(new UnavailableError("the parser is shutting down"));
    return new Promise((resolve, reject) => {
      this.#queue.push({ input, resolve, reject });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new UnavailableError("the parser is shutting down"));
    await Promise.all(this.#slots.map((slot) => slot.worker?.terminate()));
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (slot.job || this.#queue.length === 0) continue;
      this.#run(slot, this.#queue.shift()!);
    }
  }

  #run(slot: Slot, job: Job): void {
    slot.job = job;
    const worker = (slot.worker ??= this.#spawn(slot));
    const { bytes, fileName, declaredMimeType } = job.input;
    const { timeoutMs } = this.#options.limits;
    slot.timer = setTimeout(() => {
      this.#finish(slot, undefined, new TooLargeError(
        `parsing ${fileName} took longer than ${timeoutMs} ms (QUARRY_PARSE_TIMEOUT_MS); the file is malformed or too complex to read`,
      ));
      // The thread may be stuck in a loop that never yields; only terminating it frees it.
      this.#retire(slot, worker);
    }, timeoutMs);
    worker.postMessage({ id: nextId++, bytes, fileName, declaredMimeType });
  }

  #spawn(slot: Slot): Worker {
    const { limits, logger } = this.#options;
    const worker = new Worker(new URL("./parser-thread-entry.mjs", import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
    });
    worker.unref();
    worker.on("message", (message: ParseResponse | { ready: true }) => {
      if ("ready" in message) return;
      if ("stray" in message) {
        // Expected from pdf.js on corrupt files; it stays in the thread, so it is logged, not fatal.
        logger.warn({ fileName: slot.job?.input.fileName, reason: message.stray }, "a parser library left a promise rejection unhandled (isolated in its thread)");
        return;
      }
      if (slot.worker !== worker) return;
      if ("parsed" in message) this.#finish(slot, message.parsed);
      else this.#finish(slot, undefined, errorFromThread(message.error));
    });
    worker.on("error", (error: Error & { code?: string }) => {
      slot.death = error;
    });
    worker.on("exit", () => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      const job = slot.job;
      if (job) {
        this.#finish(slot, undefined, this.#deathReason(job.input.fileName, slot.death));
        logger.warn({ fileName: job.input.fileName, err: slot.death }, "a parsing thread died; it is replaced on the next parse");
      }
      slot.death = undefined;
      this.#dispatch();
    });
    return worker;
  }

  #deathReason(fileName: string, death: (Error & { code?: string }) | undefined): QuarryError {
    if (death?.code === "ERR_WORKER_OUT_OF_MEMORY") {
      return new TooLargeError(
        `parsing ${fileName} needed more than ${this.#options.limits.memoryMb} MB of memory (QUARRY_PARSE_MEMORY_MB)`,
      );
    }
    return new InvalidInputError(`${fileName} could not be parsed: the parser crashed on it${death ? ` (${death.message})` : ""}`);
  }

  #finish(slot: Slot, parsed?: ParsedDocument, error?: Error): void {
    const job = slot.job;
    if (!job) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    if (error) job.reject(error);
    else job.resolve(parsed!);
    queueMicrotask(() => this.#dispatch());
  }

  #retire(slot: Slot, worker: Worker): void {
    if (slot.worker === worker) slot.worker = undefined;
    void worker.terminate();
  }
}
