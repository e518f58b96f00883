// Handling several messages of a fetched batch at once without giving up what a log consumer
// promises: messages with one key are handled one after another, in order, and the group's
// position only moves past a message once it and everything before it are done. Both buses use it,
// so `concurrency` means the same on SQLite and on Kafka.
//
// Written here rather than taken from p-limit or p-queue: those bound concurrency but know nothing
// of per-key order or of settling results in log order, which is the point of this loop.

export interface OrderedConcurrencyOptions<T, R> {
  /** Messages in hand at once (at least 1). */
  concurrency: number;
  keyOf(item: T): string;
  /** Handles one message; its result is settled later, in log order. */
  run(item: T): Promise<R>;
  /**
   * Records a finished message (commit, dead-letter) in log order; false stops the loop without
   * settling anything after it (the subscription lost its lease, or closed before it was done).
   */
  settle(item: T, result: R): Promise<boolean> | boolean;
  /** Checked before each new message is taken; true takes no more (messages in hand still finish). */
  stopped(item: T): boolean;
}

/**
 * Runs the items under the options' rules; true when every item was settled. Items not settled
 * stay uncommitted, to be delivered again.
 */
export async function handleInOrder<T, R>(items: readonly T[], options: OrderedConcurrencyOptions<T, R>): Promise<boolean> {
  const limit = Math.max(1, Math.floor(options.concurrency));
  type Outcome = { ok: true; value: R } | { ok: false; error: unknown };
  type Entry = { item: T; key: string; done: Promise<Outcome> };
  const inHand: Entry[] = [];
  let next = 0;
  let settling = true;
  let failure: Outcome | undefined;

  /** Waits for the oldest message in hand and settles it; false once something could not be settled. */
  const settleOldest = async (): Promise<boolean> => {
    const oldest = inHand.shift()!;
    const outcome = await oldest.done;
    if (!settling) return false;
    if (!outcome.ok) {
      // A handler that throws (rather than reporting an outcome) is a bug: stop, drain, rethrow.
      failure = outcome;
      settling = false;
      return false;
    }
    settling = await options.settle(oldest.item, outcome.value);
    return settling;
  };

  while (next < items.length) {
    const item = items[next];
    if (options.stopped(item)) break;
    const key = options.keyOf(item);
    // Full hands, or an earlier message of this key still in hand: settle the oldest first.
    if (inHand.length >= limit || inHand.some((e) => e.key === key)) {
      if (!(await settleOldest())) break;
      continue;
    }
    const done = options.run(item).then(
      (value): Outcome => ({ ok: true, value }),
      (error: unknown): Outcome => ({ ok: false, error }),
    );
    inHand.push({ item, key, done });
    next++;
  }
  // What is in hand finishes either way; it is settled only while everything before it was.
  while (inHand.length > 0) await settleOldest();
  if (failure && !failure.ok) throw failure.error;
  return settling && next === items.length;
}
