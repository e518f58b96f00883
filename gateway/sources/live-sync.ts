// A running sync as watchers see it: the latest state, replaced as the counts change, and an end.
// A watcher always gets the newest state, never a backlog: one that reads slowly skips the states it
// missed (each carries every count so far), and the final one is never skipped.
import type { SourceSync } from "../../gen/quarry/common/v1/source_pb.ts";

export class LiveSync {
  private version = 0;
  private ended = false;
  private waiting: (() => void)[] = [];

  constructor(private current: SourceSync) {}

  get state(): SourceSync {
    return this.current;
  }

  update(sync: SourceSync): void {
    if (this.ended) return;
    this.current = sync;
    this.version++;
    this.wakeAll();
  }

  end(final: SourceSync): void {
    this.update(final);
    this.ended = true;
  }

  /** The current state, then each newer one, ending with the final; stops early when `signal` aborts. */
  async *watch(signal?: AbortSignal): AsyncIterable<SourceSync> {
    let seen = -1;
    while (!signal?.aborted) {
      if (seen !== this.version) {
        seen = this.version;
        const ended = this.ended;
        yield this.current;
        if (ended) return;
        continue;
      }
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        signal?.addEventListener("abort", stop, { once: true });
        this.waiting.push(() => {
          signal?.removeEventListener("abort", stop);
          resolve();
        });
      });
    }
  }

  private wakeAll(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }
}
