// The ingestion event bus. Implementations: a durable log in SQLite (embedded) and Kafka
// (distributed). Both run the same contract suite (testing/event-bus.contract.ts).

/** Topics of the ingestion pipeline, in order. Payloads are quarry.events.v1 protobuf messages. */
export const Topics = {
  documentsSubmitted: "documents.submitted",
  documentsParsed: "documents.parsed",
  chunksCreated: "chunks.created",
  chunksEmbedded: "chunks.embedded",
  ingestionProgress: "ingestion.progress",
} as const;

/**
 * Topics whose messages matter only while fresh (status reports, not events): both buses delete
 * them after this long, whatever their own retention, and give them no dead-letter topic.
 */
export const ShortLivedTopics: Readonly<Record<string, number>> = {
  "status.stage-activity": 60 * 60_000, // lib/pipeline/stage-activity-reports.ts
};

/** A short-lived topic's retention, also under a deployment's topic prefix (QUARRY_TOPIC_PREFIX). */
export function shortLivedRetentionMs(topic: string): number | undefined {
  const name = Object.keys(ShortLivedTopics).find((t) => topic.endsWith(t));
  return name === undefined ? undefined : ShortLivedTopics[name];
}

/** Where a message that kept failing ends up, with the error in its headers. */
export const deadLetterTopic = (topic: string) => `${topic}.dlq`;

/** Set on a dead letter that a handler rejected (see RejectedMessageError): the consumer group that did. */
export const REJECTED_BY_HEADER = "x-rejected-by";

/**
 * A handler's verdict that a message can never be handled, however often it is tried: its payload
 * does not decode, or it names something that does not exist. The bus dead-letters it at once, with
 * `reason` in x-error and the group in x-rejected-by, and no redrive brings it back; whoever produced
 * it finds it there. (A failure that a retry may cure is any other error.)
 */
export class RejectedMessageError extends Error {
  constructor(readonly reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = "RejectedMessageError";
  }
}

/**
 * Thrown by a handler that found its message no longer its own (BusMessage.owned() is false): the
 * bus abandons the message without retrying or committing it, since the member that holds it now
 * handles it again. The handler has published nothing of it. Singleton work (lib/leases/) throws it
 * too, naming its lease, when its lease went to another process.
 */
export class LeaseLostError extends Error {
  constructor(what: BusMessage | string) {
    super(typeof what === "string" ? what : `${what.topic} message ${what.offset} (key ${what.key}) went to another member of the group`);
    this.name = "LeaseLostError";
  }
}

export interface BusMessage {
  topic: string;
  /** Messages with one key are delivered in order; Quarry keys by document id. */
  key: string;
  value: Uint8Array;
  headers: Record<string, string>;
  /** Position in the topic (per partition for Kafka); opaque to handlers. */
  offset: string;
  /** Kafka's partition, with which the offset names one message; absent on the SQLite log, which has one. */
  partition?: string;
  timestamp: Date;
  /**
   * False once this subscription no longer holds the message: its lease (SQLite) or partition
   * (Kafka) went to another member, which delivers the message again. A stage asks before it
   * publishes its output and between long steps; on SQLite asking also renews the lease, so a
   * long handler keeps it by working. Absent where ownership cannot be lost (watchers).
   */
  owned?(): boolean;
}

/** Throws LeaseLostError when the message is no longer the handler's to finish. */
export function assertOwned(message: BusMessage): void {
  if (message.owned && !message.owned()) throw new LeaseLostError(message);
}

export type OutgoingMessage = Pick<BusMessage, "key" | "value"> & { headers?: Record<string, string> };

export type MessageHandler = (message: BusMessage) => Promise<void>;

export interface SubscribeOptions {
  /** Consumers in one group share the work; each group sees every message once (at least once). */
  group: string;
  topics: string[];
  handler: MessageHandler;
  /**
   * "earliest" resumes from the group's committed position, or the start of the topic for a new group
   * (pipeline stages). "latest" sees only messages published after subscribing and commits nothing
   * (watchers such as WatchIngestion).
   */
  from?: "earliest" | "latest";
  /** Attempts before a message goes to the dead-letter topic; default 5. */
  maxAttempts?: number;
  /** First retry delay in ms, doubled each attempt; default 200. */
  retryBackoffMs?: number;
  /**
   * Messages handled at once (default 1). Messages with one key are still handled one at a time
   * and in order, and the group's position only moves past a message once every message before it
   * is done, so a crash redelivers rather than skips. Lets a stage batch work across documents.
   */
  concurrency?: number;
  /**
   * Messages in hand at once, counting those finished and waiting for an earlier one to be
   * committed (default 16 × concurrency). A long message keeps the commit position, not the
   * messages behind it: up to this many keep flowing past it. Each one in hand is redelivered
   * after a crash, so this also bounds the work a crash repeats.
   */
  window?: number;
  /**
   * Told once a message of the subscription went to the dead-letter topic (`rejected`: at once, by
   * the handler's verdict; otherwise after every attempt failed). For metrics.
   */
  onDeadLetter?(topic: string, rejected: boolean): void;
}

export interface CloseOptions {
  /**
   * How long messages in hand may still finish and commit. After it, those left are released:
   * uncommitted, so the group gets them again (after a restart, or from another member). Default:
   * wait for them all.
   */
  graceMs?: number;
}

export interface Subscription {
  /** Takes no more messages, finishes (or, past the grace, releases) those in hand, commits, and leaves the group. */
  close(options?: CloseOptions): Promise<void>;
}

export interface EventBus {
  /** Creates topics that do not exist yet. Idempotent. */
  ensureTopics(topics: string[]): Promise<void>;
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  /** Delivery is at least once: a handler's success commits the message; a throw retries it with backoff. */
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Closes every subscription (with the options) and the connections. */
  close(options?: CloseOptions): Promise<void>;
  /**
   * Messages of the topic that the group has not committed yet, per partition (for a group that
   * never committed: the whole topic). Read for metrics and status; costs a query, not a consume.
   */
  pending(group: string, topic: string): Promise<PendingCount[]>;
  /**
   * The newest messages of a topic (at most `limit`, oldest first), read without consuming or
   * committing anything: what an operator's status view lists from a dead-letter topic.
   */
  peek(topic: string, limit: number): Promise<BusMessage[]>;
}

export interface PendingCount {
  /** The Kafka partition; "0" on the SQLite log, which has one. */
  partition: string;
  pending: number;
}
