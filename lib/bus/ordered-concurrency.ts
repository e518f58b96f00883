// Handling several messages at once without giving up what a log consumer promises: messages with
// one key are handled one after another, in order, and the group's position only moves past a
// message once it and everything before it are done. Both buses use it, so `concurrency` means the
// same on SQLite and on Kafka.
//
// The window is long-lived, not one fetched batch: a subscription keeps adding messages while
// earlier ones are still being handled, so one long message (a huge document) holds up only its
// own key and the commit position, never the messages behind it. Those run, finish, and wait in
// the window (cheaply) for their turn to be committed.
//
// Written here rather than taken from p-limit or p-queue: those bound concurrency but know nothing
// of per-key order or of settling results in log order, which is the point of this loop.

export interface OrderedWindowOptions<T, R> {
  /** Messages handled at once (at least 1). */
  concurrency: number;
  /** Messages in the window at once: handled, waiting for their key or a slot, or done and not yet settled. */
  capacity: number;
  keyOf(item: T): string;
  /** Handles one message; its result is settled later, in log order. */
  run(item: T): Promise<R>;
  /**
   * Records a finished message (commit, dead-letter) in log order; false stops settling (the
   * subscription lost its lease): the caller then releases the window.
   */
  settle(item: T, result: R): Promise<boolean> | boolean;
}

/** `skipped`: never started, because the window was draining for a close by the time its turn came. */
type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown } | { ok: "skipped" };
interface Entry<T, R> {
  item: T;
  outcome?: Outcome<R>;
}

export class OrderedWindow<T, R> {
  readonly #options: OrderedWindowOptions<T, R>;
  readonly #entries: Entry<T, R>[] = [];
  /** Per key, when its latest message in the window is done: the next one of that key starts after it. */
  readonly #keyTails = new Map<string, Promise<void>>();
  readonly #slotWaiters: (() => void)[] = [];
  #running = 0;
  #changeWaiters: (() => void)[] = [];
  #released = false;
  /** Set by drain(): messages that have not started yet never will. */
  #draining = false;

  constructor(options: OrderedWindowOptions<T, R>) {
    this.#options = { ...options, concurrency: Math.max(1, Math.floor(options.concurrency)), capacity: Math.max(1, Math.floor(options.capacity)) };
  }

  get size(): number {
    return this.#entries.length;
  }

  /** How many more messages the window takes now. */
  get room(): number {
    return Math.max(0, this.#options.capacity - this.#entries.length);
  }

  /** Messages in the window that match, e.g. to skip a message a broker delivers again. */
  some(predicate: (item: T) => boolean): boolean {
    return this.#entries.some((e) => predicate(e.item));
  }

  /** Takes a message (in log order); it starts once its key's earlier message is done and a slot is free. */
  add(item: T): void {
    const entry: Entry<T, R> = { item };
    this.#entries.push(entry);
    const key = this.#options.keyOf(item);
    const tail: Promise<void> = (this.#keyTails.get(key) ?? Promise.resolve())
      .then(async () => {
        if (this.#draining) return void (entry.outcome = { ok: "skipped" });
        await this.#acquire();
        try {
          entry.outcome = this.#draining ? { ok: "skipped" } : { ok: true, value: await this.#options.run(item) };
        } catch (error) {
          entry.outcome = { ok: false, error };
        } finally {
          this.#running--;
          this.#slotWaiters.shift()?.();
        }
      })
      .finally(() => {
        if (this.#keyTails.get(key) === tail) this.#keyTails.delete(key);
        this.#notify();
      });
    this.#keyTails.set(key, tail);
  }

  /** Whether settleReady() has anything to do now: the head has finished and the window is not closed. */
  get settleable(): boolean {
    return !this.#released && this.#entries[0]?.outcome !== undefined;
  }

  /**
   * Settles the finished messages at the head of the window, in order. False when settle() said
   * stop; a handler that threw (rather than reporting an outcome) is a bug and is rethrown here.
   */
  async settleReady(): Promise<boolean> {
    while (!this.#released && this.#entries[0]?.outcome) {
      const outcome = this.#entries[0].outcome!;
      if (outcome.ok === "skipped") return false;
      const head = this.#entries.shift()!;
      if (!outcome.ok) throw outcome.error;
      if (!(await this.#options.settle(head.item, outcome.value))) return false;
    }
    return true;
  }

  /** Resolves when a message in the window finishes (at once when the head already has). */
  changed(): Promise<void> {
    if (this.#entries[0]?.outcome) return Promise.resolve();
    return new Promise((resolve) => this.#changeWaiters.push(resolve));
  }

  /**
   * For a close: starts nothing new, and settles what is running as it finishes; stops early
   * (false) when `until` resolves first or settle() says stop. What is left is for the caller to release.
   */
  async drain(until?: Promise<unknown>): Promise<boolean> {
    this.#draining = true;
    let expired = false;
    void until?.then(() => {
      expired = true;
      this.#notify();
    });
    while (this.#entries.length > 0 && !expired) {
      if (!(await this.settleReady())) return false;
      if (this.#entries.length > 0 && !expired) await this.changed();
    }
    return this.#entries.length === 0;
  }

  /**
   * Forgets every message not yet settled: they stay uncommitted and the bus delivers them again.
   * Their handlers may still be running; their results are ignored. Returns how many were released.
   */
  release(): number {
    const count = this.#entries.length;
    this.#entries.length = 0;
    this.#notify();
    return count;
  }

  /** Ends this window for good (closing): nothing is settled any more. */
  close(): number {
    this.#released = true;
    return this.release();
  }

  #acquire(): Promise<void> {
    if (this.#running < this.#options.concurrency) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.#slotWaiters.push(() => {
        this.#running++;
        resolve();
      }),
    );
  }

  #notify(): void {
    const waiters = this.#changeWaiters;
    this.#changeWaiters = [];
    for (const wake of waiters) wake();
  }
}
