// The retry-then-dead-letter policy both bus implementations share, so a handler failure means the
// same thing on SQLite and on Kafka.
import { LeaseLostError, REJECTED_BY_HEADER, RejectedMessageError, type BusMessage, type MessageHandler, type SubscribeOptions } from "./event-bus.ts";

export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_RETRY_BACKOFF_MS = 200;

/** Structured logger the buses report handler failures to; pino's Logger fits. */
export interface BusLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  /** The other levels are optional so that a bare `{ warn }` still fits; what they would log is then dropped. */
  error?(fields: Record<string, unknown>, message: string): void;
  info?(fields: Record<string, unknown>, message: string): void;
  debug?(fields: Record<string, unknown>, message: string): void;
}

export const silentLogger: BusLogger = { warn: () => {} };

export type HandleOutcome =
  | { kind: "handled" }
  /** Every attempt failed; the message belongs in the dead-letter topic with these headers. */
  | { kind: "dead"; headers: Record<string, string> }
  /** The subscription closed while waiting to retry, or lost the message to another member; it stays uncommitted for redelivery. */
  | { kind: "abandoned" };

export interface RetryPolicy {
  maxAttempts: number;
  retryBackoffMs: number;
}

export function retryPolicy(options: Pick<SubscribeOptions, "maxAttempts" | "retryBackoffMs">): RetryPolicy {
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS));
  const retryBackoffMs = Math.max(0, options.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS);
  return { maxAttempts, retryBackoffMs };
}

/** A delay that close() can cut short, so a subscription never waits out a long backoff to stop. */
export class InterruptibleSleep {
  private wake: (() => void) | undefined;
  private interrupted = false;

  sleep(ms: number): Promise<void> {
    if (this.interrupted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        if (self.wake === done) self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
  }

  /** Ends the current sleep early (a poll wake-up); later sleeps still wait. */
  poke(): void {
    this.wake?.();
  }

  /** Ends the current sleep and every later one. */
  interrupt(): void {
    this.interrupted = true;
    this.wake?.();
  }
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/**
 * Runs the handler until it succeeds, retrying with doubling backoff; after maxAttempts the caller
 * dead-letters the message with the returned headers. `isClosing` stops retries early.
 */
export async function handleWithRetries(
  handler: MessageHandler,
  message: BusMessage,
  policy: RetryPolicy,
  sleeper: InterruptibleSleep,
  isClosing: () => boolean,
  logger: BusLogger,
  group: string,
): Promise<HandleOutcome> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
    try {
      await handler(message);
      return { kind: "handled" };
    } catch (error) {
      if (error instanceof RejectedMessageError) return rejected(message, error, attempt, group, logger);
      if (error instanceof LeaseLostError) {
        logger.warn({ topic: message.topic, offset: message.offset, key: message.key, group }, "message lost to another member; its output was not published");
        return { kind: "abandoned" };
      }
      lastError = error;
      logger.warn(
        { err: error, topic: message.topic, offset: message.offset, group, attempt, maxAttempts: policy.maxAttempts },
        "event handler failed",
      );
    }
    if (attempt === policy.maxAttempts) break;
    if (isClosing()) return { kind: "abandoned" };
    await sleeper.sleep(policy.retryBackoffMs * 2 ** (attempt - 1));
    if (isClosing()) return { kind: "abandoned" };
  }
  return {
    kind: "dead",
    headers: {
      ...message.headers,
      "x-error": errorText(lastError),
      "x-original-topic": message.topic,
      "x-original-offset": message.offset,
      "x-attempts": String(policy.maxAttempts),
    },
  };
}

/** A message its handler rejected: dead at once, and marked so that no redrive sends it back. */
function rejected(message: BusMessage, error: RejectedMessageError, attempt: number, group: string, logger: BusLogger): HandleOutcome {
  logger.warn({ topic: message.topic, offset: message.offset, key: message.key, group, reason: error.reason }, "event rejected; dead-lettered");
  return {
    kind: "dead",
    headers: {
      ...message.headers,
      "x-error": error.reason,
      [REJECTED_BY_HEADER]: group,
      "x-original-topic": message.topic,
      "x-original-offset": message.offset,
      "x-attempts": String(attempt),
    },
  };
}
