// The raw baseline at its best on this machine: the engine's own statements on a pool of threads,
// each with its own read-only connection, as many as the index's read threads. Beside the Search
// RPC with reads on threads, it is the raw query "at the same concurrency": both may use every core.
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { SqliteRawPlan } from "./sqlite-raw-query.ts";

export class RawSqlThreads {
  readonly #pool: Piscina<{ file: string; plan: SqliteRawPlan }, number>;

  constructor(
    private readonly file: string,
    readonly threads: number,
  ) {
    this.#pool = new Piscina({
      filename: fileURLToPath(new URL("./raw-sql-thread-entry.mjs", import.meta.url)),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.MAX_SAFE_INTEGER,
    });
  }

  run(plan: SqliteRawPlan): Promise<number> {
    return this.#pool.run({ file: this.file, plan });
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }
}
