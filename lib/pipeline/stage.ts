// The shape every ingestion stage shares: decode the event, do the stage's work, and turn a
// failure into either a failed document (the input's fault: no retry) or a retry (a backend was
// down: the bus redelivers with backoff and, past its attempts, dead-letters the event; the stage's
// redrive consumer later puts the event back, a capped number of times, see redrive.ts), or a
// rejection (an event that can never be handled — it does not decode, or names a knowledge base
// that does not exist: the bus dead-letters it at once with the reason, and no redrive returns it).
import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { LeaseLostError, RejectedMessageError, type BusMessage, type EventBus, type Subscription } from "../bus/event-bus.ts";
import { RETRYING_MARK } from "../domain.ts";
import type { Logger } from "../logger.ts";
import { failureClass, noMetrics, type Metrics, type StageOutcome } from "../metrics/metrics.ts";
import { isRetryable, toDomainError } from "../rpc/error-mapping.ts";
import { publishProgress, type DocumentRef } from "./progress.ts";
import { startRedrive, type RedriveSettings } from "./redrive.ts";

export interface StageOptions<S extends DescMessage> {
  name: string;
  bus: EventBus;
  topic: string;
  schema: S;
  logger: Logger;
  /** Which document the event is about (for failure reports). */
  documentOf(event: MessageShape<S>, message: BusMessage): DocumentRef;
  handle(event: MessageShape<S>, message: BusMessage): Promise<void>;
  maxAttempts?: number;
  retryBackoffMs?: number;
  /** Documents in hand at once (see SubscribeOptions.concurrency); default 1. */
  concurrency?: number;
  /** How dead letters come back (defaults: DEFAULT_REDRIVE); false leaves them dead. */
  redrive?: Partial<RedriveSettings> | false;
  /** Where the stage's events, failures, durations and dead letters are counted. */
  metrics?: Metrics;
}

export async function runStage<S extends DescMessage>(options: StageOptions<S>): Promise<Subscription> {
  const work = await consume(options);
  if (options.redrive === false) return work;
  let redrive: Subscription;
  try {
    redrive = await startRedrive({
      bus: options.bus,
      topic: options.topic,
      group: options.name,
      logger: options.logger,
      settings: options.redrive,
      onGiveUp: (message, lastError, redrives) => giveUp(options, message, lastError, redrives),
    });
  } catch (error) {
    await work.close();
    throw error;
  }
  return {
    async close(closeOptions) {
      await Promise.all([work.close(closeOptions), redrive.close(closeOptions)]);
    },
  };
}

/** A dead letter out of redrives: the document's status says so, without "(retrying)". */
async function giveUp<S extends DescMessage>(options: StageOptions<S>, message: BusMessage, lastError: string, redrives: number): Promise<void> {
  let event: MessageShape<S>;
  try {
    event = fromBinary(options.schema, message.value);
  } catch {
    return; // Undecodable events are rejected, and the redrive leaves those alone; nothing to report.
  }
  const doc = options.documentOf(event, message);
  await publishProgress(options.bus, doc, {
    phase: "failed",
    percent: 0,
    error: `${options.name}: ${lastError} (gave up after ${redrives} redrives)`,
  });
}

/**
 * The event in a message, or a rejection: retrying cannot make a payload readable, so the bus
 * dead-letters it at once with this reason in x-error, where its producer can see what became of it.
 */
export function decodeOrReject<S extends DescMessage>(schema: S, message: BusMessage): MessageShape<S> {
  try {
    return fromBinary(schema, message.value);
  } catch (error) {
    throw new RejectedMessageError(`the payload on ${message.topic} is not a ${schema.typeName}: ${(error as Error).message}`, { cause: error });
  }
}

function consume<S extends DescMessage>(options: StageOptions<S>): Promise<Subscription> {
  const metrics = options.metrics ?? noMetrics;
  return options.bus.subscribe({
    group: options.name,
    topics: [options.topic],
    maxAttempts: options.maxAttempts,
    retryBackoffMs: options.retryBackoffMs,
    concurrency: options.concurrency,
    onDeadLetter: (_topic, rejected) => metrics.deadLettered(options.name, rejected),
    handler: async (message) => {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      metrics.stageStarted(options.name);
      let ended: { outcome: StageOutcome; failure?: unknown };
      try {
        ended = await handleEvent(options, message);
      } catch (error) {
        // A message lost to another member (LeaseLostError) counts as retrying: it is handled again.
        const outcome = error instanceof RejectedMessageError ? "rejected" : "retrying";
        metrics.stageEnded(options.name, outcome, seconds(), failureClass(toDomainError(error)));
        throw error;
      }
      metrics.stageEnded(options.name, ended.outcome, seconds(), ended.failure === undefined ? undefined : failureClass(ended.failure));
    },
  });
}

/**
 * One event through the stage: handled, or failed for good (the document's fault: it is marked
 * failed and the event committed). Throws what the bus must retry or dead-letter.
 */
async function handleEvent<S extends DescMessage>(options: StageOptions<S>, message: BusMessage): Promise<{ outcome: StageOutcome; failure?: unknown }> {
  const { bus, logger } = options;
  const event = decodeOrReject(options.schema, message);
  const doc = options.documentOf(event, message);
  try {
    await options.handle(event, message);
    return { outcome: "handled" };
  } catch (error) {
    // Not the document's failure: the member that holds the message now handles it.
    if (error instanceof LeaseLostError) throw error;
    if (error instanceof RejectedMessageError) {
      // Told to whoever watches the document, then thrown on for the bus to dead-letter.
      await publishProgress(bus, doc, { phase: "failed", percent: 0, error: `${options.name}: ${error.reason}` }).catch(() => {});
      throw error;
    }
    const domain = toDomainError(error);
    const reason = domain instanceof Error ? domain.message : String(domain);
    if (isRetryable(error)) {
      logger.warn({ err: domain, documentId: doc.documentId, stage: options.name }, "stage failed; will retry");
      await publishProgress(bus, doc, { phase: "failed", percent: 0, error: `${options.name}: ${reason} ${RETRYING_MARK}` }).catch(() => {});
      throw error;
    }
    logger.info({ documentId: doc.documentId, stage: options.name, reason }, "document failed");
    await publishProgress(bus, doc, { phase: "failed", percent: 0, error: `${options.name}: ${reason}` });
    return { outcome: "failed", failure: domain };
  }
}
