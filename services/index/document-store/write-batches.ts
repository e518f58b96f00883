// Joins writes that arrive together into one batch per key (a chunk index; or a refresh of the
// catalog index, which every write waiting for one shares), without a timer: a write
// that finds its key idle starts a batch at once, and writes arriving while that batch is in flight
// wait for it and then go together in the next. The indexing stage writes several documents at once,
// so under load each batch carries them all: one round of requests and one refresh instead of one per
// document. A batch answers each write on its own (one document's failure is not its neighbours'),
// and batches of one key never overlap, so each sees every earlier batch's writes.

export interface WriteBatchesOptions {
  /** The most writes one batch takes (the rest wait for the next). */
  maxWrites: number;
  /** The most weight (e.g. records) one batch takes; a single heavier write still goes, alone. */
  maxWeight: number;
}

/** Runs one batch: the outcome of each write in order, undefined for success. */
export type RunBatch<W> = (key: string, writes: W[]) => Promise<(Error | undefined)[]>;

interface Waiting<W> {
  write: W;
  weight: number;
  id: string;
  resolve(): void;
  reject(error: unknown): void;
}

export class WriteBatches<W> {
  private readonly queues = new Map<string, Waiting<W>[]>();

  constructor(
    private readonly run: RunBatch<W>,
    private readonly options: WriteBatchesOptions,
  ) {}

  /**
   * Resolves once the batch holding this write is done, or rejects with this write's failure. Two
   * writes with the same id (one document) never share a batch: the later one goes in the next.
   */
  write(key: string, write: W, { id, weight }: { id: string; weight: number }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiting = { write, weight, id, resolve, reject };
      const queue = this.queues.get(key);
      if (queue) {
        queue.push(waiting);
        return;
      }
      this.queues.set(key, [waiting]);
      void this.drain(key);
    });
  }

  private async drain(key: string): Promise<void> {
    for (;;) {
      const queue = this.queues.get(key)!;
      if (queue.length === 0) {
        this.queues.delete(key);
        return;
      }
      const batch = this.take(queue);
      try {
        const outcomes = await this.run(key, batch.map((w) => w.write));
        batch.forEach((w, i) => (outcomes[i] ? w.reject(outcomes[i]) : w.resolve()));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
  }

  private take(queue: Waiting<W>[]): Waiting<W>[] {
    const ids = new Set<string>();
    let count = 0;
    let weight = 0;
    while (count < queue.length && count < this.options.maxWrites && !ids.has(queue[count].id) && (count === 0 || weight + queue[count].weight <= this.options.maxWeight)) {
      ids.add(queue[count].id);
      weight += queue[count].weight;
      count++;
    }
    return queue.splice(0, count);
  }
}
