// Dead letters of a stage get a second life: a backend that was down (Tika, OpenSearch, a model
// endpoint) usually comes back, and the documents that died while it was gone should then ingest
// without anyone re-uploading them. The bus retries a failing message a few times within seconds
// and then dead-letters it; this consumer of `<topic>.dlq` waits, with a delay that doubles per
// redrive, and re-publishes the message to the stage's topic, counting redrives in x-redrives.
// Past the cap the message stays in the dead-letter topic and the stage reports the document
// failed for good.
import type { BusMessage, EventBus, Subscription } from "../bus/event-bus.ts";
import { deadLetterTopic, REJECTED_BY_HEADER } from "../bus/event-bus.ts";
import { ConfigError, integer, type Env } from "../config.ts";
import { UnavailableError } from "../errors.ts";
import type { Logger } from "../logger.ts";

export const REDRIVES_HEADER = "x-redrives";
/** The error of the attempt before the last redrive, kept for whoever reads the topic. */
export const LAST_ERROR_HEADER = "x-last-error";

/** Headers the bus adds when it dead-letters a message; they describe one death, not the message. */
const DEAD_LETTER_HEADERS = ["x-error", "x-original-topic", "x-original-offset", "x-original-partition", "x-attempts", REJECTED_BY_HEADER];

export interface RedriveSettings {
  /** Redrives of one message before it stays dead. 0 turns redrive off. */
  maxRedrives: number;
  /** Wait after the dead-lettering before the first redrive; doubled for each later one. */
  delayMs: number;
  /** Upper bound of the doubled delay. */
  maxDelayMs: number;
}

/**
 * About 7 minutes of cover with 10 redrives (5 s, 10 s, 20 s, 40 s, then 60 s each). The cap stays
 * at a minute because the wait happens inside the handler: a Kafka consumer that holds a message
 * much longer than its rebalance timeout loses its partitions during a rebalance.
 */
export const DEFAULT_REDRIVE: RedriveSettings = { maxRedrives: 10, delayMs: 5_000, maxDelayMs: 60_000 };

/** QUARRY_MAX_REDRIVES, QUARRY_REDRIVE_DELAY_MS, QUARRY_REDRIVE_MAX_DELAY_MS over the defaults. */
export function redriveSettings(env: Env): RedriveSettings {
  const settings = {
    maxRedrives: integer(env, "QUARRY_MAX_REDRIVES", DEFAULT_REDRIVE.maxRedrives),
    delayMs: integer(env, "QUARRY_REDRIVE_DELAY_MS", DEFAULT_REDRIVE.delayMs),
    maxDelayMs: integer(env, "QUARRY_REDRIVE_MAX_DELAY_MS", DEFAULT_REDRIVE.maxDelayMs),
  };
  if (settings.maxDelayMs < settings.delayMs) {
    throw new ConfigError(`QUARRY_REDRIVE_MAX_DELAY_MS (${settings.maxDelayMs}) must not be below QUARRY_REDRIVE_DELAY_MS (${settings.delayMs})`);
  }
  return settings;
}

/** How many times the message was redriven already (0 for a first death). */
export function redrivesOf(message: Pick<BusMessage, "headers">): number {
  const count = Number(message.headers[REDRIVES_HEADER] ?? 0);
  return Number.isInteger(count) && count > 0 ? count : 0;
}

/** The wait before redrive number `redrives + 1`, counted from the moment the message was dead-lettered. */
export function redriveDelayMs(redrives: number, settings: RedriveSettings): number {
  return Math.min(settings.maxDelayMs, settings.delayMs * 2 ** Math.min(redrives, 30));
}

/** The message as it goes back to its topic: the dead-letter headers dropped, the count raised. */
export function redrivenHeaders(message: Pick<BusMessage, "headers">): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (!DEAD_LETTER_HEADERS.includes(name)) headers[name] = value;
  }
  headers[REDRIVES_HEADER] = String(redrivesOf(message) + 1);
  const error = message.headers["x-error"];
  if (error) headers[LAST_ERROR_HEADER] = error;
  return headers;
}

export interface RedriveOptions {
  bus: EventBus;
  /** The stage's topic; its dead letters are read from `<topic>.dlq` and go back here. */
  topic: string;
  /** The stage's consumer group; the redrive consumer is `<group>.redrive`. */
  group: string;
  logger: Logger;
  settings?: Partial<RedriveSettings>;
  /** A message out of redrives: the stage tells the document's watchers that it failed for good. */
  onGiveUp?(message: BusMessage, lastError: string, redrives: number): Promise<void>;
}

/** Starts the redrive consumer of one stage. Its close() cuts a pending wait short; the message stays for the next run. */
export async function startRedrive(options: RedriveOptions): Promise<Subscription> {
  const settings = { ...DEFAULT_REDRIVE, ...options.settings };
  const { bus, logger, topic } = options;
  const stopping = new AbortController();
  const dlq = deadLetterTopic(topic);

  const inner = await bus.subscribe({
    group: `${options.group}.redrive`,
    topics: [dlq],
    from: "earliest",
    // Only a publish can fail here (the bus itself is down); keep trying rather than dead-letter a dead letter.
    maxAttempts: 8,
    retryBackoffMs: 500,
    handler: async (message) => {
      // A rejected message would be rejected again: it stays in the dead-letter topic for its producer to see.
      if (message.headers[REJECTED_BY_HEADER] !== undefined) return;
      const redrives = redrivesOf(message);
      const lastError = message.headers["x-error"] ?? "unknown error";
      if (redrives >= settings.maxRedrives) {
        logger.warn({ topic, key: message.key, redrives, group: options.group }, "dead letter out of redrives; it stays in the dead-letter topic");
        await options.onGiveUp?.(message, lastError, redrives);
        return;
      }
      const due = message.timestamp.getTime() + redriveDelayMs(redrives, settings);
      await sleepUntil(due, stopping.signal);
      // Thrown so the bus leaves the message uncommitted: the next run redrives it.
      if (stopping.signal.aborted) throw new UnavailableError("redrive stopped before the message was due");
      await bus.publish(topic, [{ key: message.key, value: message.value, headers: redrivenHeaders(message) }]);
      logger.info({ topic, key: message.key, redrive: redrives + 1, maxRedrives: settings.maxRedrives }, "dead letter redriven");
    },
  });

  return {
    async close(options) {
      // The bus marks itself closing synchronously, so the aborted handler's throw leaves the message uncommitted.
      const closed = inner.close(options);
      stopping.abort();
      await closed;
    },
  };
}

function sleepUntil(due: number, signal: AbortSignal): Promise<void> {
  const ms = due - Date.now();
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
