// The embedded event bus: a durable log in a SQLite file (WAL), for Quarry on one machine. The file
// may also hold the catalog, so every table here starts with `bus_`.
//
// Hand-written rather than a library because no maintained Node package offers a SQLite-backed log
// with consumer groups; the whole thing is a few indexed queries.
//
// Model: one append-only table of messages with a global AUTOINCREMENT sequence (SQLite serialises
// writers, so a reader never sees a later seq committed before an earlier one), and one committed
// position per (group, topic). A consumer group's work on a topic is held by one subscription at a
// time through a lease row (renewed by a heartbeat, released on close, taken over when it expires),
// so two subscriptions of one group — in this process or another one on the same file — never both
// handle a message: the second one stands by and takes over when the first goes away. Messages are
// handled through an OrderedWindow (per-key order, commits in log order).
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { FailedPreconditionError } from "../errors.ts";
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
  type HandleOutcome,
  type RetryPolicy,
} from "./message-retry.ts";
import { OrderedWindow } from "./ordered-concurrency.ts";

export interface SqliteEventBusOptions {
  /**
   * How often the file is checked for commits by another connection (another process on the same
   * file), and how often a subscription standing by for a group's lease polls. Default 40. A publish
   * through this bus wakes its subscribers at once without either.
   */
  pollIntervalMs?: number;
  /** Messages read per poll. Default 100. */
  batchSize?: number;
  /** How long a group's lease on a topic outlives its last heartbeat (a crashed holder's takeover delay). Default 10000. */
  leaseMs?: number;
  /** Messages older than this are deleted (regardless of consumers, as Kafka's retention does). Default: keep all. */
  retentionMs?: number;
  logger?: BusLogger;
}

interface MessageRow {
  seq: number;
  topic: string;
  key: string;
  value: Buffer;
  headers: string;
  ts: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS bus_topics (
  name TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS bus_messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  topic TEXT NOT NULL,
  key TEXT NOT NULL,
  value BLOB NOT NULL,
  headers TEXT NOT NULL,
  ts INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS bus_messages_topic_seq ON bus_messages (topic, seq);
CREATE INDEX IF NOT EXISTS bus_messages_ts ON bus_messages (ts);
CREATE TABLE IF NOT EXISTS bus_offsets (
  group_id TEXT NOT NULL,
  topic TEXT NOT NULL,
  committed_seq INTEGER NOT NULL,
  PRIMARY KEY (group_id, topic)
);
CREATE TABLE IF NOT EXISTS bus_leases (
  group_id TEXT NOT NULL,
  topic TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (group_id, topic)
);
`;

const PRUNE_EVERY_MS = 60_000;

function prepareStatements(db: Database.Database) {
  return {
    insertTopic: db.prepare("INSERT OR IGNORE INTO bus_topics (name, created_at) VALUES (?, ?)"),
    insertMessage: db.prepare(
      "INSERT INTO bus_messages (topic, key, value, headers, ts) VALUES (?, ?, ?, ?, ?)",
    ),
    readAfter: db.prepare<[string, number, number], MessageRow>(
      "SELECT seq, topic, key, value, headers, ts FROM bus_messages WHERE topic = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    newest: db.prepare<[string, number], MessageRow>(
      "SELECT * FROM (SELECT seq, topic, key, value, headers, ts FROM bus_messages WHERE topic = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq",
    ),
    endOfTopic: db.prepare<[string], { seq: number | null }>(
      "SELECT MAX(seq) AS seq FROM bus_messages WHERE topic = ?",
    ),
    committed: db.prepare<[string, string], { committed_seq: number }>(
      "SELECT committed_seq FROM bus_offsets WHERE group_id = ? AND topic = ?",
    ),
    commit: db.prepare(
      `INSERT INTO bus_offsets (group_id, topic, committed_seq) VALUES (?, ?, ?)
       ON CONFLICT (group_id, topic) DO UPDATE SET committed_seq = excluded.committed_seq`,
    ),
    leaseHolder: db.prepare<[string, string], { owner: string; expires_at: number }>(
      "SELECT owner, expires_at FROM bus_leases WHERE group_id = ? AND topic = ?",
    ),
    // Takes the lease when it is free, expired, or already ours; `changes` says whether we hold it.
    acquireLease: db.prepare(
      `INSERT INTO bus_leases (group_id, topic, owner, expires_at) VALUES (@group, @topic, @owner, @expiresAt)
       ON CONFLICT (group_id, topic) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE bus_leases.owner = excluded.owner OR bus_leases.expires_at < @now`,
    ),
    renewLease: db.prepare(
      "UPDATE bus_leases SET expires_at = ? WHERE group_id = ? AND topic = ? AND owner = ?",
    ),
    releaseLeases: db.prepare("DELETE FROM bus_leases WHERE owner = ?"),
    prune: db.prepare("DELETE FROM bus_messages WHERE ts < ?"),
    pruneTopic: db.prepare("DELETE FROM bus_messages WHERE topic = ? AND ts < ?"),
    pending: db.prepare<[{ group: string; topic: string }], { pending: number }>(
      `SELECT COUNT(*) AS pending FROM bus_messages
       WHERE topic = @topic AND seq > COALESCE((SELECT committed_seq FROM bus_offsets WHERE group_id = @group AND topic = @topic), 0)`,
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

export class SqliteEventBus implements EventBus {
  readonly db: Database.Database;
  private readonly ownsDatabase: boolean;
  private readonly options: Required<Omit<SqliteEventBusOptions, "retentionMs" | "logger">> & {
    retentionMs?: number;
  };
  readonly logger: BusLogger;
  private readonly subscriptions = new Set<SqliteSubscription>();
  private closed = false;
  private lastPruneAt = 0;
  private readonly statements: Statements;
  /** Watches PRAGMA data_version while anything is subscribed (see watchOtherWriters). */
  private otherWriters: NodeJS.Timeout | undefined;

  /**
   * @param database a file path (the bus opens, configures for WAL and later closes its own
   *   connection — the usual choice, so the bus never blocks another component's transactions) or an
   *   open better-sqlite3 Database that the caller configured and will close.
   */
  constructor(database: string | Database.Database, options: SqliteEventBusOptions = {}) {
    if (typeof database === "string") {
      this.db = new Database(database);
      this.ownsDatabase = true;
      this.db.pragma("journal_mode = WAL");
      // NORMAL in WAL mode survives a process crash (only power loss can drop the last commits).
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma("busy_timeout = 5000");
    } else {
      this.db = database;
      this.ownsDatabase = false;
    }
    this.options = {
      pollIntervalMs: options.pollIntervalMs ?? 40,
      batchSize: options.batchSize ?? 100,
      leaseMs: options.leaseMs ?? 10_000,
      retentionMs: options.retentionMs,
    };
    this.logger = options.logger ?? silentLogger;
    this.db.exec(SCHEMA);
    this.statements = prepareStatements(this.db);
  }

  async ensureTopics(topics: string[]): Promise<void> {
    this.assertOpen();
    const now = Date.now();
    this.db.transaction(() => {
      for (const topic of topics) this.statements.insertTopic.run(validTopic(topic), now);
    })();
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    this.assertOpen();
    validTopic(topic);
    if (messages.length === 0) return;
    const now = Date.now();
    this.db.transaction(() => {
      this.statements.insertTopic.run(topic, now);
      for (const message of messages) this.insertMessage(topic, message, now);
      // A short-lived topic is trimmed by whoever writes to it: nothing else would.
      const keepMs = shortLivedRetentionMs(topic);
      if (keepMs !== undefined) this.statements.pruneTopic.run(topic, now - keepMs);
    })();
    this.notify(topic);
    this.pruneIfDue(now);
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.assertOpen();
    checkSubscribeOptions(options);
    await this.ensureTopics(options.topics);
    const subscription = new SqliteSubscription(this, options, this.options.pollIntervalMs, this.options.batchSize, this.options.leaseMs);
    this.subscriptions.add(subscription);
    this.watchOtherWriters();
    subscription.start();
    return subscription;
  }

  async pending(group: string, topic: string): Promise<PendingCount[]> {
    this.assertOpen();
    return [{ partition: "0", pending: this.statements.pending.get({ group, topic })?.pending ?? 0 }];
  }

  async peek(topic: string, limit: number): Promise<BusMessage[]> {
    this.assertOpen();
    return this.statements.newest.all(topic, Math.max(0, Math.floor(limit))).map(toBusMessage);
  }

  async close(options?: CloseOptions): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close(options)));
    this.stopWatchingOtherWriters();
    this.closed = true;
    if (this.ownsDatabase) this.db.close();
  }

  // ---- used by SqliteSubscription ----

  /** @internal */
  forget(subscription: SqliteSubscription): void {
    this.subscriptions.delete(subscription);
    if (this.subscriptions.size === 0) this.stopWatchingOtherWriters();
  }

  /** @internal */
  get statementsForSubscriptions() {
    return this.statements;
  }

  /** @internal */
  insertMessage(topic: string, message: OutgoingMessage, now: number): void {
    this.statements.insertMessage.run(topic, message.key, Buffer.from(message.value), JSON.stringify(message.headers ?? {}), now);
  }

  /** @internal Wakes this process's subscribers of the topic; other processes find it by polling. */
  notify(topic: string): void {
    for (const subscription of this.subscriptions) {
      if (subscription.topics.includes(topic)) subscription.wake();
    }
  }

  /**
   * Wakes every subscription when another connection has committed to the file: one PRAGMA per
   * interval for the whole bus, where each subscription used to query its topics 25 times a second
   * (an idle embedded Quarry spent about 5% of a core on that). SQLite changes data_version for a
   * connection whenever some other connection commits, in this process or another; this bus's own
   * commits do not change it, and its publishes wake their subscribers directly (notify).
   */
  private watchOtherWriters(): void {
    if (this.otherWriters) return;
    const dataVersion = this.db.prepare("PRAGMA data_version").pluck();
    let seen = dataVersion.get() as number;
    this.otherWriters = setInterval(() => {
      if (!this.db.open) return;
      const version = dataVersion.get() as number;
      if (version === seen) return;
      seen = version;
      for (const subscription of this.subscriptions) subscription.wake();
    }, this.options.pollIntervalMs);
    // The subscriptions' own timers keep a process alive as they always did; this one need not.
    this.otherWriters.unref();
  }

  private stopWatchingOtherWriters(): void {
    clearInterval(this.otherWriters);
    this.otherWriters = undefined;
  }

  private pruneIfDue(now: number): void {
    const retentionMs = this.options.retentionMs;
    if (retentionMs === undefined || now - this.lastPruneAt < Math.min(PRUNE_EVERY_MS, retentionMs)) return;
    this.lastPruneAt = now;
    this.statements.prune.run(now - retentionMs);
  }

  private assertOpen(): void {
    if (this.closed) throw new FailedPreconditionError("the event bus is closed");
  }
}

class SqliteSubscription implements Subscription {
  readonly topics: string[];
  private readonly group: string;
  private readonly latest: boolean;
  private readonly policy: RetryPolicy;
  private readonly owner = randomUUID();
  /** Last seq taken into the window per topic this subscription may read. */
  private readonly positions = new Map<string, number>();
  private readonly leaseExpiry = new Map<string, number>();
  /** Bumped each time a topic's lease is taken afresh: a message read under an earlier one is no longer ours. */
  private readonly leaseGeneration = new Map<string, number>();
  private readonly idle = new InterruptibleSleep();
  /** Set by wake(): something may have arrived since the last fetch, so the next idle wait is skipped. */
  private woken = false;
  private readonly backoff = new InterruptibleSleep();
  private closing = false;
  /** Ends the grace of close(): what is still in hand is released. */
  private releaseNow: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly bus: SqliteEventBus,
    private readonly options: SubscribeOptions,
    private readonly pollIntervalMs: number,
    private readonly batchSize: number,
    private readonly leaseMs: number,
  ) {
    this.topics = [...new Set(options.topics)];
    this.group = options.group;
    this.latest = options.from === "latest";
    this.policy = retryPolicy(options);
    if (this.latest) {
      // Fixed now, before subscribe() returns, so everything published afterwards is seen.
      for (const topic of this.topics) this.positions.set(topic, this.sql.endOfTopic.get(topic)?.seq ?? 0);
    }
  }

  private get sql() {
    return this.bus.statementsForSubscriptions;
  }

  start(): void {
    if (!this.latest) {
      this.heartbeat = setInterval(() => this.renewLeases(), Math.max(50, Math.floor(this.leaseMs / 3)));
      this.heartbeat.unref();
    }
    this.loop = this.run().catch((error: unknown) => {
      this.bus.logger.warn({ err: error, group: this.group, topics: this.topics }, "event bus subscription stopped on an error");
    });
  }

  wake(): void {
    this.woken = true;
    this.idle.poke();
  }

  async close(options: CloseOptions = {}): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      if (options.graceMs !== undefined) {
        const timer = setTimeout(() => this.releaseNow?.(), Math.max(0, options.graceMs));
        timer.unref();
      }
      this.idle.interrupt();
      this.backoff.interrupt();
    }
    await this.loop;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    if (!this.latest && this.bus.db.open) this.sql.releaseLeases.run(this.owner);
    this.leaseExpiry.clear();
    this.bus.forget(this);
  }

  private async run(): Promise<void> {
    const concurrency = this.options.concurrency ?? 1;
    const window = new OrderedWindow<MessageRow, HandleOutcome>({
      concurrency,
      capacity: this.options.window ?? 16 * concurrency,
      keyOf: (row) => `${row.topic}\u0000${row.key}`,
      run: (row) => this.handle(row),
      settle: (row, outcome) => this.settle(row, outcome),
    });
    const released = new Promise<void>((resolve) => (this.releaseNow = resolve));
    try {
      while (!this.closing) {
        // Messages behind a long one are taken (and handled) while it runs; only commits wait for it.
        this.woken = false;
        const rows = window.room > 0 ? this.fetch(window.room) : [];
        for (const row of rows) {
          window.add(row);
          this.positions.set(row.topic, row.seq);
        }
        // Checked first so an idle poll makes no promise here: with tracing on, Node runs a hook on
        // every promise, and each subscription polls 25 times a second (docs/benchmarks/observability.md).
        if (window.settleable && !(await window.settleReady())) {
          // A lost lease: another member redelivers from the group's commit; so do we if we get it back.
          window.release();
          this.rewind();
          continue;
        }
        // With nothing in hand only a wake (a publish here, a commit by another connection), the
        // clock or close brings work: the sleep alone waits, and no changed() waiter is left behind.
        if (rows.length === 0 && !this.woken) await (window.size === 0 ? this.idle.sleep(this.idleWaitMs()) : Promise.race([this.idle.sleep(this.pollIntervalMs), window.changed()]));
      }
      await window.drain(released);
    } finally {
      const left = window.close();
      if (left > 0) this.bus.logger.warn({ group: this.group, topics: this.topics, released: left }, "closing: messages still in hand were released uncommitted");
    }
  }

  /**
   * How long an idle subscription waits for a wake. One standing by for a lease must look at the
   * clock: a holder that died commits nothing, and its lease only expires. One that reads all its
   * topics is woken by every publish and every commit to the file; it still polls now and then, so
   * a wake lost to something unforeseen costs a second, not a message.
   */
  private idleWaitMs(): number {
    const standingBy = !this.latest && this.topics.some((topic) => !this.holdsLease(topic));
    return standingBy ? this.pollIntervalMs : Math.max(this.pollIntervalMs, SAFETY_POLL_MS);
  }

  /** After a release, reading starts again from the group's committed position (held topics only). */
  private rewind(): void {
    for (const topic of this.topics) {
      if (this.latest || !this.holdsLease(topic)) continue;
      this.positions.set(topic, this.sql.committed.get(this.group, topic)?.committed_seq ?? 0);
    }
  }

  /** The next messages (at most `room`) across the topics this subscription may read, in log order. */
  private fetch(room: number): MessageRow[] {
    const limit = Math.min(room, this.batchSize);
    const rows: MessageRow[] = [];
    for (const topic of this.topics) {
      if (!this.latest && !this.holdsLease(topic) && !this.tryAcquire(topic)) continue;
      rows.push(...this.sql.readAfter.all(topic, this.positions.get(topic) ?? 0, limit));
    }
    if (this.topics.length > 1) rows.sort((a, b) => a.seq - b.seq);
    return rows.slice(0, limit);
  }

  /** Handles one message through retries; settle() then commits it (or dead-letters it). */
  private handle(row: MessageRow): Promise<HandleOutcome> {
    const message = toBusMessage(row);
    if (!this.latest) {
      const generation = this.leaseGeneration.get(row.topic);
      message.owned = () => this.stillOwns(row.topic, generation);
    }
    return handleWithRetries(this.options.handler, message, this.policy, this.backoff, () => this.closing, this.bus.logger, this.group);
  }

  /** Commits a handled message, in log order; false when the subscription closed before it was done or lost its lease. */
  private settle(row: MessageRow, outcome: HandleOutcome): boolean {
    if (outcome.kind === "abandoned") return false;
    if (!this.bus.db.open) return false;
    const dlq = deadLetterTopic(row.topic);
    let committed = true;
    // Dead-lettering and committing past the message happen together or not at all.
    this.bus.db.transaction(() => {
      if (!this.latest) committed = this.commit(row.topic, row.seq);
      if (committed && outcome.kind === "dead") {
        const now = Date.now();
        this.sql.insertTopic.run(dlq, now);
        this.bus.insertMessage(dlq, { key: row.key, value: row.value, headers: outcome.headers }, now);
      }
    })();
    if (!committed) return false;
    if (outcome.kind === "dead") {
      this.bus.notify(dlq);
      this.options.onDeadLetter?.(row.topic, outcome.headers[REJECTED_BY_HEADER] !== undefined);
    }
    return true;
  }

  /** Commits only while this subscription still holds the group's lease; a lost lease means another member took over. */
  private commit(topic: string, seq: number): boolean {
    const expiresAt = Date.now() + this.leaseMs;
    const renewed = this.sql.renewLease.run(expiresAt, this.group, topic, this.owner).changes === 1;
    if (!renewed) {
      this.loseLease(topic);
      return false;
    }
    this.leaseExpiry.set(topic, expiresAt);
    this.sql.commit.run(this.group, topic, seq);
    return true;
  }

  private readable(topic: string): boolean {
    return this.latest || this.holdsLease(topic);
  }

  private holdsLease(topic: string): boolean {
    return (this.leaseExpiry.get(topic) ?? 0) > Date.now();
  }

  /**
   * Whether a message read under lease `generation` is still this subscription's: renews the lease
   * in the file (a handler that asks between steps keeps it however long it works), and says no once
   * another member took it, even if this one has taken it back since (it was redelivered meanwhile).
   */
  private stillOwns(topic: string, generation: number | undefined): boolean {
    if (!this.bus.db.open || this.leaseGeneration.get(topic) !== generation || !this.leaseExpiry.has(topic)) return false;
    const expiresAt = Date.now() + this.leaseMs;
    if (this.sql.renewLease.run(expiresAt, this.group, topic, this.owner).changes !== 1) {
      this.loseLease(topic);
      return false;
    }
    this.leaseExpiry.set(topic, expiresAt);
    return true;
  }

  private tryAcquire(topic: string): boolean {
    const now = Date.now();
    // A cheap read first, so a standing-by subscription does not write on every poll.
    const holder = this.sql.leaseHolder.get(this.group, topic);
    if (holder && holder.owner !== this.owner && holder.expires_at >= now) return false;
    const expiresAt = now + this.leaseMs;
    const taken =
      this.sql.acquireLease.run({ group: this.group, topic, owner: this.owner, expiresAt, now }).changes === 1;
    if (!taken) return false;
    this.leaseExpiry.set(topic, expiresAt);
    // Late to renew (a busy thread) but never taken over: nothing was redelivered, so reading goes on
    // where it was, and the messages in hand stay this subscription's.
    if (holder?.owner === this.owner && this.positions.has(topic)) return true;
    this.leaseGeneration.set(topic, (this.leaseGeneration.get(topic) ?? 0) + 1);
    // Start from what the group committed, whoever committed it.
    this.positions.set(topic, this.sql.committed.get(this.group, topic)?.committed_seq ?? 0);
    return true;
  }

  private renewLeases(): void {
    if (this.closing || !this.bus.db.open) return;
    for (const topic of [...this.leaseExpiry.keys()]) {
      const expiresAt = Date.now() + this.leaseMs;
      if (this.sql.renewLease.run(expiresAt, this.group, topic, this.owner).changes === 1) {
        this.leaseExpiry.set(topic, expiresAt);
      } else {
        this.loseLease(topic);
      }
    }
  }

  private loseLease(topic: string): void {
    this.leaseExpiry.delete(topic);
    this.positions.delete(topic);
    this.bus.logger.warn({ group: this.group, topic }, "event bus subscription lost its lease to another member");
  }
}

/** The idle poll of a subscription that nothing woke (idleWaitMs). */
const SAFETY_POLL_MS = 1000;

function toBusMessage(row: MessageRow): BusMessage {
  return {
    topic: row.topic,
    key: row.key,
    value: new Uint8Array(row.value.buffer, row.value.byteOffset, row.value.byteLength),
    headers: JSON.parse(row.headers) as Record<string, string>,
    offset: String(row.seq),
    timestamp: new Date(row.ts),
  };
}
