// The distributed event bus on Kafka (kafkajs). Same contract as the SQLite log: per-key order
// (the key picks the partition; a subscription handles up to `concurrency` messages of a partition
// at once, never two of one key, committing in offset order, and a long message does not keep the
// partitions behind it waiting: see handleBatch), a
// commit only after the handler succeeded, in-process retries with doubling backoff, then the
// dead-letter topic. "latest" subscriptions use a throwaway consumer group that never commits and
// starts at the partition ends measured before subscribe() returns.
import { randomUUID } from "node:crypto";
import {
  Kafka,
  logLevel,
  Partitioners,
  type Admin,
  type Consumer,
  type EachBatchPayload,
  type KafkaMessage,
  type LogEntry,
  type Producer,
} from "kafkajs";
import { FailedPreconditionError, InvalidInputError, UnavailableError } from "../errors.ts";
import { checkSubscribeOptions, validTopic } from "./bus-arguments.ts";
import {
  deadLetterTopic,
  REJECTED_BY_HEADER,
  shortLivedRetentionMs,
  type BusMessage,
  type CloseOptions,
  type EventBus,
  type OutgoingMessage,
  type PendingCount,
  type SubscribeOptions,
  type Subscription,
} from "./event-bus.ts";
import {
  handleWithRetries,
  InterruptibleSleep,
  retryPolicy,
  silentLogger,
  type BusLogger,
  type RetryPolicy,
} from "./message-retry.ts";
import type { KafkaSecurity } from "./kafka-security.ts";
import { restartAfterFatalCrashes } from "./kafka-crash-recovery.ts";
import { kafkaLogLevel } from "./kafka-log.ts";
import { OrderedWindow } from "./ordered-concurrency.ts";

export interface KafkaEventBusOptions {
  /** host:port of one or more brokers (KAFKA_BROKERS, comma-separated, split by the caller). */
  brokers: string[];
  clientId?: string;
  /**
   * For topics ensureTopics creates. Default 3 partitions; replication min(3, brokers), so a single
   * dev broker gets 1 and a cluster of three or more gets 3 (see topicReplication).
   */
  numPartitions?: number;
  replicationFactor?: number;
  /** Consumer group timings; lower values make joins and failover faster. */
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  rebalanceTimeoutMs?: number;
  /** Longest a fetch waits on the broker for new data; bounds delivery latency and close time. */
  maxWaitTimeInMs?: number;
  /** How long subscribe() waits for the consumer to join its group. Default 60000. */
  joinTimeoutMs?: number;
  /** Receives kafkajs warnings and errors as well as handler failures; silent by default. */
  logger?: BusLogger;
  /** TLS and SASL for a secured cluster (kafka-security.ts). */
  security?: KafkaSecurity;
}

/** Kafka's default is 1 MB; parsed documents and chunk batches can be far larger. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const TOPIC_READY_TIMEOUT_MS = 30_000;
/**
 * Longest a batch holds the fetcher while a message of it is still running. Past it the batch
 * returns (the message keeps running) so other partitions' messages are fetched and handled.
 */
const BATCH_SLICE_MS = 1_000;
/** Tries of one peek, each with a group of its own. */
const PEEK_ATTEMPTS = 3;

/**
 * A send counts once every in-sync replica has it (kafkajs's default, which idempotence requires,
 * written out because losing a broker must not lose an acknowledged event).
 */
const ALL_IN_SYNC_REPLICAS = -1;

export interface TopicReplication {
  factor: number;
  /** min.insync.replicas for the topic; undefined leaves the broker's default. */
  minInSync?: number;
}

/**
 * With three or more copies a write needs two of them in sync, so one broker down still accepts
 * writes and no acknowledged write lives on one broker only; fewer copies cannot ask for two.
 */
export function topicReplication(factor: number): TopicReplication {
  if (!Number.isInteger(factor) || factor < 1) throw new InvalidInputError(`Kafka replication factor must be 1 or more, not ${factor}`);
  return factor >= 3 ? { factor, minInSync: 2 } : { factor };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  private readonly options: Required<Omit<KafkaEventBusOptions, "logger" | "clientId" | "security" | "replicationFactor">>;
  private readonly replicationFactor: number | undefined;
  readonly logger: BusLogger;
  private readonly knownTopics = new Set<string>();
  private readonly subscriptions = new Set<KafkaSubscription>();
  private admin: Promise<Admin> | undefined;
  private producer: Promise<Producer> | undefined;
  private closed = false;

  constructor(options: KafkaEventBusOptions) {
    if (options.brokers.length === 0) throw new InvalidInputError("KafkaEventBus needs at least one broker address");
    this.logger = options.logger ?? silentLogger;
    this.replicationFactor = options.replicationFactor;
    this.options = {
      brokers: options.brokers,
      numPartitions: options.numPartitions ?? 3,
      sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 3_000,
      rebalanceTimeoutMs: options.rebalanceTimeoutMs ?? 60_000,
      maxWaitTimeInMs: options.maxWaitTimeInMs ?? 500,
      joinTimeoutMs: options.joinTimeoutMs ?? 60_000,
    };
    const logger = this.logger;
    this.kafka = new Kafka({
      clientId: options.clientId ?? "quarry",
      brokers: options.brokers,
      ...options.security,
      // kafkajs logs to the console by default; route its warnings and errors to our logger, each at
      // the level it deserves for us (kafka-log.ts). Its own INFO diary (consumer started, joined) stays out.
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        (entry: LogEntry) => {
          const { message, ...fields } = entry.log;
          const level = kafkaLogLevel(entry);
          const write = level === "warn" ? logger.warn : level === "error" ? (logger.error ?? logger.warn) : logger[level];
          write?.call(logger, { ...fields, namespace: entry.namespace, kafkaLevel: logLevel[entry.level] }, `kafkajs: ${message}`);
        },
    });
  }

  async ensureTopics(topics: string[]): Promise<void> {
    this.assertOpen();
    const wanted = new Set<string>();
    for (const topic of topics) {
      wanted.add(validTopic(topic));
      // A pipeline topic's dead letters need somewhere to go even where brokers do not auto-create.
      if (!topic.endsWith(".dlq") && shortLivedRetentionMs(topic) === undefined) wanted.add(deadLetterTopic(topic));
    }
    const missing = [...wanted].filter((topic) => !this.knownTopics.has(topic));
    if (missing.length === 0) return;
    const admin = await this.connectedAdmin();
    const replication = await this.topicReplication(admin);
    try {
      await admin.createTopics({
        // Our own wait below: kafkajs gives up on "unknown topic" while a new topic's metadata spreads.
        waitForLeaders: false,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: this.options.numPartitions,
          replicationFactor: replication.factor,
          configEntries: [
            { name: "max.message.bytes", value: String(MAX_MESSAGE_BYTES) },
            ...(replication.minInSync ? [{ name: "min.insync.replicas", value: String(replication.minInSync) }] : []),
            ...(shortLivedRetentionMs(topic) !== undefined ? [{ name: "retention.ms", value: String(shortLivedRetentionMs(topic)) }] : []),
          ],
        })),
      });
    } catch (error) {
      // Another process may have created some of them at the same moment; that is success too.
      if (!onlyTopicExists(error)) throw new UnavailableError("Kafka could not create topics", { cause: error });
    }
    await this.waitForLeaders(admin, missing);
    for (const topic of missing) this.knownTopics.add(topic);
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    this.assertOpen();
    validTopic(topic);
    if (messages.length === 0) return;
    const producer = await this.connectedProducer();
    try {
      await producer.send({
        topic,
        acks: ALL_IN_SYNC_REPLICAS,
        messages: messages.map((message) => ({
          key: message.key,
          value: Buffer.from(message.value.buffer, message.value.byteOffset, message.value.byteLength),
          headers: message.headers,
        })),
      });
    } catch (error) {
      throw new UnavailableError(`Kafka did not accept messages for ${topic}`, { cause: error });
    }
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.assertOpen();
    checkSubscribeOptions(options);
    await this.ensureTopics(options.topics);
    const latest = options.from === "latest";
    const groupId = latest ? `${options.group}.latest.${randomUUID()}` : options.group;
    const startAt = latest ? await this.partitionEnds(options.topics) : undefined;

    const consumer = this.kafka.consumer({
      groupId,
      sessionTimeout: this.options.sessionTimeoutMs,
      heartbeatInterval: this.options.heartbeatIntervalMs,
      rebalanceTimeout: this.options.rebalanceTimeoutMs,
      maxWaitTimeInMs: this.options.maxWaitTimeInMs,
    });
    const subscription = new KafkaSubscription(this, consumer, options, groupId, startAt, this.options.heartbeatIntervalMs);
    this.subscriptions.add(subscription);
    try {
      await subscription.start(this.options.joinTimeoutMs);
    } catch (error) {
      await subscription.close().catch(() => {});
      throw error instanceof UnavailableError
        ? error
        : new UnavailableError(`Kafka consumer for group ${options.group} could not start`, { cause: error });
    }
    return subscription;
  }

  /** The consumer lag: each partition's end minus the group's committed offset (or the partition's start). */
  async pending(group: string, topic: string): Promise<PendingCount[]> {
    this.assertOpen();
    const admin = await this.connectedAdmin();
    const [ends, committed] = await Promise.all([
      retryWhileRetriable(() => admin.fetchTopicOffsets(topic)),
      retryWhileRetriable(() => admin.fetchOffsets({ groupId: group, topics: [topic] })),
    ]);
    const at = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
    return ends.map(({ partition, high, low }) => {
      const position = at.get(partition) ?? -1n;
      const from = position >= 0n ? position : BigInt(low);
      const lag = BigInt(high) - from;
      return { partition: String(partition), pending: Number(lag > 0n ? lag : 0n) };
    });
  }

  /**
   * Reads the newest messages of each partition through a throwaway consumer group that never
   * commits (kafkajs has no group-less assign) and is deleted afterwards, stopping at the partition
   * ends measured first; the newest `limit` of them all, oldest first.
   */
  async peek(topic: string, limit: number): Promise<BusMessage[]> {
    this.assertOpen();
    validTopic(topic);
    const wanted = Math.max(0, Math.floor(limit));
    if (wanted === 0) return [];
    const admin = await this.connectedAdmin();
    // A dead-letter topic nobody needed yet may not exist: it holds nothing.
    const known = await admin.listTopics().catch((error: unknown) => {
      throw new UnavailableError("Kafka did not list its topics", { cause: error });
    });
    if (!known.includes(topic)) return [];
    const offsets = await retryWhileRetriable(() => admin.fetchTopicOffsets(topic)).catch((error: unknown) => {
      throw new UnavailableError(`Kafka did not give the offsets of ${topic}`, { cause: error });
    });
    // Per partition: [first offset to read, the end measured now]. More than one partition can hold
    // the newest messages, so each gives up to `limit` and the merge keeps the newest.
    const ranges = new Map<number, [bigint, bigint]>();
    for (const { partition, low, high } of offsets) {
      const end = BigInt(high);
      const start = end - BigInt(wanted) > BigInt(low) ? end - BigInt(wanted) : BigInt(low);
      if (start < end) ranges.set(partition, [start, end]);
    }
    if (ranges.size === 0) return [];
    let messages: BusMessage[] | undefined;
    // A new group's coordinator can be still loading ("not the correct coordinator"); a fresh group soon finds it.
    for (let attempt = 1; messages === undefined; attempt++) {
      const peek = new TopicPeek(this.kafka, topic, ranges, this.options.joinTimeoutMs);
      try {
        messages = await peek.read();
      } catch (error) {
        if (attempt >= PEEK_ATTEMPTS) throw error;
        this.logger.warn({ err: error, topic, attempt }, "Kafka peek failed; trying again with a new group");
      } finally {
        await admin.deleteGroups([peek.groupId]).catch(() => {
          // An empty group without offsets also expires by itself; a failed delete costs nothing more.
        });
      }
    }
    return messages
      .sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime() || Number(BigInt(a.offset) - BigInt(b.offset)))
      .slice(-wanted);
  }

  async close(options?: CloseOptions): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close(options)));
    const [producer, admin] = await Promise.allSettled([this.producer, this.admin]);
    if (producer.status === "fulfilled" && producer.value) await producer.value.disconnect();
    if (admin.status === "fulfilled" && admin.value) await admin.value.disconnect();
  }

  // ---- used by KafkaSubscription ----

  /** @internal */
  forget(subscription: KafkaSubscription): void {
    this.subscriptions.delete(subscription);
  }

  /** @internal Sends a message to the dead-letter topic even while the bus is closing. */
  async deadLetter(topic: string, message: OutgoingMessage): Promise<void> {
    const producer = await this.connectedProducer();
    await producer.send({
      topic: deadLetterTopic(topic),
      acks: ALL_IN_SYNC_REPLICAS,
      messages: [{ key: message.key, value: Buffer.from(message.value), headers: message.headers }],
    });
  }

  /** The configured replication, else min(3, brokers) measured now. */
  private async topicReplication(admin: Admin): Promise<TopicReplication> {
    if (this.replicationFactor !== undefined) return topicReplication(this.replicationFactor);
    try {
      const { brokers } = await admin.describeCluster();
      return topicReplication(Math.min(3, brokers.length));
    } catch (error) {
      throw new UnavailableError("Kafka did not say how many brokers it has", { cause: error });
    }
  }

  /** A topic is usable once every partition has a leader; until then produce and list-offsets fail. */
  private async waitForLeaders(admin: Admin, topics: string[]): Promise<void> {
    const deadline = Date.now() + TOPIC_READY_TIMEOUT_MS;
    for (;;) {
      try {
        const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
        const ready =
          metadata.length === topics.length &&
          metadata.every((topic) => topic.partitions.length > 0 && topic.partitions.every((p) => p.leader >= 0));
        // Leaders show up in metadata a moment before they answer; list-offsets proves they do.
        if (ready) {
          await Promise.all(topics.map((topic) => admin.fetchTopicOffsets(topic)));
          return;
        }
      } catch (error) {
        if (!notReadyYet(error) || Date.now() > deadline) {
          throw new UnavailableError(`Kafka topics did not become ready: ${(error as Error).message}`, { cause: error });
        }
      }
      if (Date.now() > deadline) throw new UnavailableError(`Kafka topics ${topics.join(", ")} have no leader yet`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The next offset of every partition of the topics, keyed by partitionKey(). */
  private async partitionEnds(topics: string[]): Promise<Map<string, bigint>> {
    const admin = await this.connectedAdmin();
    const ends = new Map<string, bigint>();
    for (const topic of new Set(topics)) {
      const offsets = await retryWhileRetriable(() => admin.fetchTopicOffsets(topic));
      for (const { partition, high } of offsets) ends.set(partitionKey(topic, partition), BigInt(high));
    }
    return ends;
  }

  private connectedAdmin(): Promise<Admin> {
    // Admin calls here are short and follow topic creation; retry them sooner than kafkajs's 300 ms default.
    this.admin ??= connect(
      this.kafka.admin({ retry: { initialRetryTime: 50, retries: 8 } }),
      "admin",
      () => (this.admin = undefined),
    );
    return this.admin;
  }

  private connectedProducer(): Promise<Producer> {
    // Idempotence keeps a retried send from writing duplicates; one request in flight keeps order on retry.
    this.producer ??= connect(
      // The default partitioner is the Java client's (murmur2), so keys land where other Kafka clients put them.
      this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner }),
      "producer",
      () => (this.producer = undefined),
    );
    return this.producer;
  }

  private assertOpen(): void {
    if (this.closed) throw new FailedPreconditionError("the event bus is closed");
  }
}

class KafkaSubscription implements Subscription {
  private readonly policy: RetryPolicy;
  private readonly backoff = new InterruptibleSleep();
  private closing = false;
  private closed: Promise<void> | undefined;
  private stopRecovery: (() => void) | undefined;
  /** Per partition (partitionKey): messages in hand, across batches. */
  private readonly windows = new Map<string, OrderedWindow<KafkaMessage, boolean>>();
  /** Per partition: the latest batch's payload, whose resolve and commit functions settle with. */
  private readonly payloads = new Map<string, EachBatchPayload>();
  private releaseNow!: () => void;
  /** Resolves when close()'s grace is over: windows stop draining and release what they hold. */
  private readonly released = new Promise<void>((resolve) => (this.releaseNow = resolve));

  constructor(
    private readonly bus: KafkaEventBus,
    private readonly consumer: Consumer,
    private readonly options: SubscribeOptions,
    private readonly groupId: string,
    /** For "latest": per partition, the first offset to handle; earlier ones are skipped. */
    private readonly startAt: Map<string, bigint> | undefined,
    private readonly heartbeatIntervalMs: number,
  ) {
    this.policy = retryPolicy(options);
  }

  private get latest(): boolean {
    return this.startAt !== undefined;
  }

  /** Resolves once the consumer has joined its group and holds its partitions. */
  async start(joinTimeoutMs: number): Promise<void> {
    const { consumer } = this;
    await consumer.connect();
    // "latest" also reads from the beginning of the (fresh) group's partitions but skips to startAt:
    // an offset reset to "latest" would happen at the first fetch, after subscribe() returned, and
    // could miss what was published in between.
    await consumer.subscribe({ topics: [...new Set(this.options.topics)], fromBeginning: true });
    consumer.on(consumer.events.GROUP_JOIN, (event) => this.forgetRevoked(event.payload.memberAssignment));
    let stopListening: (() => void)[] = [];
    const joined = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new UnavailableError(`Kafka consumer group ${this.options.group} did not form within ${joinTimeoutMs} ms`)),
        joinTimeoutMs,
      );
      stopListening = [
        () => clearTimeout(timer),
        consumer.on(consumer.events.GROUP_JOIN, () => resolve()),
        consumer.on(consumer.events.CRASH, (event) => {
          if (!event.payload.restart) reject(event.payload.error);
        }),
      ];
    });
    const run = () =>
      consumer.run({
        // Commits happen only after a message was handled (or dead-lettered), never on a timer.
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: (payload) => this.handleBatch(payload),
      });
    try {
      await run();
      await joined;
      this.stopRecovery = restartAfterFatalCrashes(consumer, run, { group: this.groupId, logger: this.bus.logger, closing: () => this.closing });
      // Spares a watcher reading the topic from the start; the skip in handleBatch is what guarantees it.
      for (const [key, offset] of this.startAt ?? []) {
        const [topic, partition] = splitPartitionKey(key);
        consumer.seek({ topic, partition, offset: offset.toString() });
      }
    } finally {
      for (const stop of stopListening) stop();
    }
  }

  close(options: CloseOptions = {}): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      this.backoff.interrupt();
      this.stopRecovery?.();
      if (options.graceMs !== undefined) {
        const timer = setTimeout(() => this.releaseNow(), Math.max(0, options.graceMs));
        timer.unref();
      }
      try {
        // Waits for the batch in hand (which drains its window, or releases it past the grace) before leaving the group.
        await this.consumer.disconnect();
      } finally {
        for (const window of this.windows.values()) window.close();
        this.windows.clear();
        this.bus.forget(this);
      }
    })();
    return this.closed;
  }

  /**
   * eachBatch rather than eachMessage because its commit goes straight to the group coordinator:
   * kafkajs drops a consumer.commitOffsets() made while the consumer is stopping, which would lose
   * the commit of the message close() waits for.
   *
   * Each partition has a window that outlives the batch: a message still running when the batch's
   * time slice ends stays in it, unresolved, and the batch returns so that the fetcher (which waits
   * for every batch of a fetch before fetching again) serves the other partitions. The partition is
   * fetched again from its last resolved offset; messages already in the window are not started twice.
   */
  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, isRunning, isStale } = payload;
    const { topic, partition } = batch;
    const startKey = partitionKey(topic, partition);
    this.payloads.set(startKey, payload);
    let messages = batch.messages;
    if (this.startAt) {
      // Skips what predates the subscription, and what a late seek would replay (offsets only grow).
      const from = this.startAt.get(startKey) ?? 0n;
      const skipped = messages.filter((raw) => BigInt(raw.offset) < from);
      for (const raw of skipped) resolveOffset(raw.offset);
      messages = messages.slice(skipped.length);
    }
    const stopped = () => this.closing || !isRunning() || isStale();
    let window = this.windows.get(startKey);
    if (window && isStale()) {
      // A seek moved the partition: what the window holds is no longer what comes next.
      window.close();
      window = undefined;
    }
    if (!window) {
      window = this.newWindow(topic, partition);
      this.windows.set(startKey, window);
    }
    for (const raw of messages) {
      if (stopped() || window.room === 0) break;
      if (window.some((held) => held.offset === raw.offset)) continue;
      this.startAt?.set(startKey, BigInt(raw.offset) + 1n);
      window.add(raw);
    }
    if (this.closing || !isRunning()) {
      await window.drain(this.released);
      return;
    }
    const sliceEnds = Date.now() + BATCH_SLICE_MS;
    for (;;) {
      if (!(await window.settleReady())) {
        window.close();
        this.windows.delete(startKey);
        return;
      }
      if (window.size === 0 || stopped() || Date.now() >= sliceEnds) return;
      await Promise.race([window.changed(), sleep(sliceEnds - Date.now())]);
    }
  }

  private newWindow(topic: string, partition: number): OrderedWindow<KafkaMessage, boolean> {
    const startKey = partitionKey(topic, partition);
    const concurrency = this.options.concurrency ?? 1;
    const window: OrderedWindow<KafkaMessage, boolean> = new OrderedWindow<KafkaMessage, boolean>({
      concurrency,
      capacity: this.options.window ?? 16 * concurrency,
      keyOf: (raw) => raw.key?.toString("utf8") ?? "",
      // A revoked partition's window is dropped (forgetRevoked), a stale one replaced: either way
      // the message's next holder delivers it again. Its payload goes with it, so a handler still
      // running on a revoked partition has no group session to keep alive and skips the beat.
      run: (raw) => this.handle(topic, partition, raw, async () => this.payloads.get(startKey)?.heartbeat(), () => this.windows.get(startKey) === window),
      // Settling happens inside handleBatch, so the payload is the current batch's.
      settle: async (raw, handled) => {
        if (!handled) return false;
        const { resolveOffset, commitOffsetsIfNecessary } = this.payloads.get(startKey)!;
        resolveOffset(raw.offset);
        if (this.latest) return true;
        try {
          // The committed offset is the next one to read.
          const offset = (BigInt(raw.offset) + 1n).toString();
          await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset }] }] });
        } catch (error) {
          // Usually a rebalance: the partition's next owner redelivers from the last commit (at least once).
          this.bus.logger.warn({ err: error, topic, partition, offset: raw.offset, group: this.groupId }, "Kafka offset commit failed");
        }
        return true;
      },
    });
    return window;
  }

  /** A rebalance took partitions away: their windows are released (the new owner redelivers). */
  private forgetRevoked(assignment: Record<string, number[]>): void {
    for (const [key, window] of this.windows) {
      const [topic, partition] = splitPartitionKey(key);
      if (assignment[topic]?.includes(partition)) continue;
      window.close();
      this.windows.delete(key);
      this.payloads.delete(key);
    }
  }

  /** Handles one message through retries and dead-lettering; false when close() cut the retries short. */
  private async handle(topic: string, partition: number, raw: KafkaMessage, heartbeat: () => Promise<void>, owned: () => boolean): Promise<boolean> {
    const message = { ...toBusMessage(topic, partition, raw), ...(this.latest ? {} : { owned }) };
    // A slow handler or a long backoff must not cost the consumer its group membership.
    const beating = setInterval(() => heartbeat().catch(() => {}), this.heartbeatIntervalMs);
    let outcome;
    try {
      outcome = await handleWithRetries(
        this.options.handler,
        message,
        this.policy,
        this.backoff,
        () => this.closing,
        this.bus.logger,
        this.options.group,
      );
    } finally {
      clearInterval(beating);
    }
    if (outcome.kind === "abandoned") return false;
    if (outcome.kind === "dead") {
      // A throw here makes kafkajs redeliver the message, so a failed dead-letter is never a silent loss.
      await this.bus.deadLetter(topic, {
        key: message.key,
        value: message.value,
        headers: { ...outcome.headers, "x-original-partition": String(partition) },
      });
      this.options.onDeadLetter?.(topic, outcome.headers[REJECTED_BY_HEADER] !== undefined);
    }
    return true;
  }
}

/** One peek: a consumer of its own group that reads each partition's range and leaves, committing nothing. */
class TopicPeek {
  readonly groupId = `quarry.peek.${randomUUID()}`;
  /** By partition and offset: the seek can make the consumer fetch a message twice. */
  private readonly messages = new Map<string, BusMessage>();
  /** Partitions not read to their end yet. */
  private readonly open: Set<number>;
  private finish!: () => void;
  private readonly finished = new Promise<void>((resolve) => (this.finish = resolve));

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    private readonly ranges: Map<number, [bigint, bigint]>,
    private readonly timeoutMs: number,
  ) {
    this.open = new Set(ranges.keys());
  }

  async read(): Promise<BusMessage[]> {
    const consumer = this.kafka.consumer({ groupId: this.groupId, maxWaitTimeInMs: 100 });
    let timer: NodeJS.Timeout | undefined;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [this.topic], fromBeginning: true });
      const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
      const crashed = new Promise<never>((_, reject) =>
        consumer.on(consumer.events.CRASH, (event) => {
          if (!event.payload.restart) reject(event.payload.error);
        }),
      );
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new UnavailableError(`Kafka did not deliver the newest messages of ${this.topic} within ${this.timeoutMs} ms`)), this.timeoutMs);
      });
      // Raced below, possibly after the race is decided: a late rejection is no unhandled one.
      for (const settled of [crashed, timedOut]) settled.catch(() => {});
      await consumer.run({ autoCommit: false, eachBatch: (payload) => this.take(payload) });
      await Promise.race([joined, crashed, timedOut]);
      for (const [partition, [start]] of this.ranges) consumer.seek({ topic: this.topic, partition, offset: start.toString() });
      await Promise.race([this.finished, crashed, timedOut]);
      return [...this.messages.values()];
    } catch (error) {
      throw error instanceof UnavailableError ? error : new UnavailableError(`Kafka could not read ${this.topic}`, { cause: error });
    } finally {
      clearTimeout(timer);
      await consumer.disconnect().catch(() => {});
    }
  }

  private async take({ batch }: EachBatchPayload): Promise<void> {
    const range = this.ranges.get(batch.partition);
    if (!range || !this.open.has(batch.partition)) return;
    const [start, end] = range;
    for (const raw of batch.messages) {
      const offset = BigInt(raw.offset);
      // Before the seek lands the consumer reads from the start; what came after the measured end is not asked for.
      if (offset >= start && offset < end) this.messages.set(`${batch.partition}:${raw.offset}`, toBusMessage(this.topic, batch.partition, raw));
    }
    // lastOffset counts records a batch skips (transaction markers), so a partition ending in one still ends.
    if (batch.messages.length > 0 && BigInt(batch.lastOffset()) >= end - 1n) {
      this.open.delete(batch.partition);
      if (this.open.size === 0) this.finish();
    }
  }
}

function partitionKey(topic: string, partition: number): string {
  return `${partition}:${topic}`;
}

function splitPartitionKey(key: string): [string, number] {
  const colon = key.indexOf(":");
  return [key.slice(colon + 1), Number(key.slice(0, colon))];
}

function toBusMessage(topic: string, partition: number, raw: KafkaMessage): BusMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw.headers ?? {})) {
    if (value === undefined) continue;
    headers[name] = (Array.isArray(value) ? value[value.length - 1] : value).toString();
  }
  const value = raw.value ?? Buffer.alloc(0);
  return {
    topic,
    key: raw.key?.toString() ?? "",
    value: new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
    headers,
    offset: raw.offset,
    partition: String(partition),
    timestamp: new Date(Number(raw.timestamp)),
  };
}

async function connect<T extends { connect(): Promise<void> }>(client: T, what: string, forget: () => void): Promise<T> {
  try {
    await client.connect();
    return client;
  } catch (error) {
    forget();
    throw new UnavailableError(`Kafka ${what} could not connect`, { cause: error });
  }
}

function isRetriable(error: unknown): boolean {
  return (error as { retriable?: boolean })?.retriable === true;
}

/**
 * Retriable, or kafkajs's fetchTopicOffsets failing on a topic its metadata lists without partitions
 * yet (a TypeError inside kafkajs, seen on a 3-broker cluster while several processes created the
 * same topics at once): either way the topic is still being made, and asking again succeeds.
 */
function notReadyYet(error: unknown): boolean {
  return isRetriable(error) || error instanceof TypeError;
}

/** For the moments after topic creation, when a broker may briefly not know it leads a partition. */
async function retryWhileRetriable<T>(operation: () => Promise<T>, attempts = 20): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!notReadyYet(error) || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * Math.min(attempt, 5)));
    }
  }
}

function onlyTopicExists(error: unknown): boolean {
  const errors = (error as { errors?: { type?: string }[] })?.errors;
  if (Array.isArray(errors) && errors.length > 0) return errors.every((e) => e.type === "TOPIC_ALREADY_EXISTS");
  return (error as { type?: string })?.type === "TOPIC_ALREADY_EXISTS";
}
