// The shape every ingestion stage shares: decode the event, do the stage's work, and turn a
// failure into either a failed document (the input's fault: no retry) or a retry (a backend was
// down: the bus redelivers with backoff and, past its attempts, dead-letters the event; the stage's
// redrive consumer later puts the event back, a capped number of times, see redrive.ts).
import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { BusMessage, EventBus, Subscription } from "../bus/event-bus.ts";
import { RETRYING_MARK } from "../domain.ts";
import type { Logger } from "../logger.ts";
import { isRetryable, toDomainError } from "../rpc/error-mapping.ts";
import { publishProgress, type DocumentRef } from "./progress.ts";
import { startRedrive, type RedriveSettings } from "./redrive.ts";

/**
 * Ends the error of a failure the pipeline will still retry (in the bus, then by redrive). Such a
 * status is not final: later progress of the same version may move the document on to ready.
 */

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
    return; // Undecodable events never reach the dead-letter topic through a stage; nothing to report.
  }
  const doc = options.documentOf(event, message);
  await publishProgress(options.bus, doc, {
    phase: "failed",
    percent: 0,
    error: `${options.name}: ${lastError} (gave up after ${redrives} redrives)`,
  });
}

function consume<S extends DescMessage>(options: StageOptions<S>): Promise<Subscription> {
  const { bus, logger } = options;
  return bus.subscribe({
    group: options.name,
    topics: [options.topic],
    maxAttempts: options.maxAttempts,
    retryBackoffMs: options.retryBackoffMs,
    concurrency: options.concurrency,
    handler: async (message) => {
      let event: MessageShape<S>;
      try {
        event = fromBinary(options.schema, message.value);
      } catch (error) {
        // A message no stage can read is dropped with a log line; retrying cannot fix it.
        logger.error({ err: error, topic: message.topic, offset: message.offset }, "undecodable event skipped");
        return;
      }
      const doc = options.documentOf(event, message);
      try {
        await options.handle(event, message);
      } catch (error) {
        const domain = toDomainError(error);
        const reason = domain instanceof Error ? domain.message : String(domain);
        if (isRetryable(error)) {
          logger.warn({ err: domain, documentId: doc.documentId, stage: options.name }, "stage failed; will retry");
          await publishProgress(bus, doc, { phase: "failed", percent: 0, error: `${options.name}: ${reason} ${RETRYING_MARK}` }).catch(() => {});
          throw error;
        }
        logger.info({ documentId: doc.documentId, stage: options.name, reason }, "document failed");
        await publishProgress(bus, doc, { phase: "failed", percent: 0, error: `${options.name}: ${reason}` });
      }
    },
  });
}
