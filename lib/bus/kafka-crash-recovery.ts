// kafkajs restarts a crashed consumer only when the crash's cause is retriable. A broker restart can
// crash it with one that is not: KafkaJSGroupCoordinatorNotFound while the restarted broker is still
// electing the leader of __consumer_offsets (tulios/kafkajs#1445, #1443). The consumer then stays
// stopped for good, its partitions are read by no one, and the stage it feeds stalls without a
// word. kafkajs offers no hook for this case (restartOnFailure is consulted for retriable crashes
// only), so the subscription restarts the consumer itself, with backoff, until it joins again.
import type { BusLogger } from "./message-retry.ts";

/** The part of a kafkajs Consumer this needs. */
export interface CrashingConsumer {
  readonly events: { readonly CRASH: "consumer.crash"; readonly GROUP_JOIN: "consumer.group_join" };
  on(event: "consumer.crash", listener: (event: { payload: { error: Error; groupId: string; restart: boolean } }) => void): () => void;
  on(event: "consumer.group_join", listener: () => void): () => void;
}

export interface CrashRecoveryOptions {
  group: string;
  logger: BusLogger;
  /** True once the subscription is closing: a crash then is not worth a restart. */
  closing(): boolean;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Restarts `consumer` through `run` (its consumer.run with the subscription's settings) after each
 * crash kafkajs will not restart from: after firstDelayMs, doubling up to maxDelayMs while the
 * restarts keep crashing, back to firstDelayMs once the consumer has joined its group. Returns the
 * function that stops watching (and cancels a restart not yet made).
 */
export function restartAfterFatalCrashes(consumer: CrashingConsumer, run: () => Promise<void>, options: CrashRecoveryOptions): () => void {
  const firstDelayMs = options.firstDelayMs ?? 1_000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  let delayMs = firstDelayMs;
  let timer: NodeJS.Timeout | undefined;
  const restart = () => {
    timer = undefined;
    if (options.closing()) return;
    // A restart that crashes again is reported through CRASH and lands here once more.
    run().catch((error: unknown) => options.logger.warn({ err: error, group: options.group }, "restarting the Kafka consumer failed"));
  };
  const stopCrashes = consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (payload.restart || options.closing() || timer) return;
    options.logger.warn(
      { err: payload.error, group: options.group, restartInMs: delayMs },
      "the Kafka consumer stopped on an error kafkajs does not restart from; restarting it",
    );
    timer = setTimeout(restart, delayMs);
    delayMs = Math.min(maxDelayMs, delayMs * 2);
  });
  const stopJoins = consumer.on(consumer.events.GROUP_JOIN, () => {
    delayMs = firstDelayMs;
  });
  return () => {
    clearTimeout(timer);
    timer = undefined;
    stopCrashes();
    stopJoins();
  };
}
