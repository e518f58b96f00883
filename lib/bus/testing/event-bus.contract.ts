// The behaviour every EventBus must show, written only against the interface so the SQLite log and
// Kafka run the very same suite. Each test makes its own topics and groups (random suffix), so runs
// against a shared broker never see each other's messages.
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { deadLetterTopic, LeaseLostError, REJECTED_BY_HEADER, RejectedMessageError, type BusMessage, type EventBus, type Subscription } from "../event-bus.ts";

export interface EventBusFixture {
  bus: EventBus;
  /** A fresh bus on the same storage or brokers (the caller closes the old one first). */
  reopen?: () => Promise<EventBus>;
  /** Closes every bus the fixture made and removes what it created. */
  cleanup(): Promise<void>;
}

/** Generous for a broker's group join, which takes seconds; SQLite meets it in milliseconds. */
const DELIVERY_TIMEOUT_MS = 45_000;
/** How long to keep watching for deliveries that must not happen. */
const SETTLE_MS = 600;
const TEST_TIMEOUT_MS = 120_000;
const FAST_RETRY = { retryBackoffMs: 10 } as const;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string) => encoder.encode(text);
const text = (value: Uint8Array) => decoder.decode(value);
const unique = (name: string) => `contract.${name}.${randomUUID().slice(0, 8)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => void): Promise<void> {
  await vi.waitFor(check, { timeout: DELIVERY_TIMEOUT_MS, interval: 20 });
}

/** Collects what a handler saw; `values` in arrival order. */
function recorder() {
  const messages: BusMessage[] = [];
  return {
    messages,
    values: () => messages.map((message) => text(message.value)),
    handler: async (message: BusMessage) => {
      messages.push(message);
    },
  };
}

function numbered(prefix: string, from: number, count: number) {
  return Array.from({ length: count }, (_, i) => `${prefix}-${from + i}`);
}

export function describeEventBusContract(name: string, factory: () => Promise<EventBusFixture>): void {
  describe(`EventBus contract: ${name}`, () => {
    let fixture: EventBusFixture;
    let bus: EventBus;
    const subscriptions: Subscription[] = [];

    beforeEach(async () => {
      fixture = await factory();
      bus = fixture.bus;
      subscriptions.length = 0;
    });

    afterEach(async () => {
      await Promise.all(subscriptions.map((subscription) => subscription.close()));
      await fixture.cleanup();
    });

    async function subscribe(options: Parameters<EventBus["subscribe"]>[0], on: EventBus = bus): Promise<Subscription> {
      const subscription = await on.subscribe(options);
      subscriptions.push(subscription);
      return subscription;
    }

    async function publishValues(topic: string, values: string[], key = "k", on: EventBus = bus): Promise<void> {
      await on.publish(topic, values.map((value) => ({ key, value: bytes(value) })));
    }

    it("delivers key, value bytes and headers intact", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("intact");
      await bus.ensureTopics([topic]);
      await bus.ensureTopics([topic]); // idempotent
      const value = Uint8Array.from({ length: 256 }, (_, i) => i);
      const headers = { "content-type": "application/x-protobuf", "x-trace": "ünïcödé ✓" };
      const before = Date.now();
      await bus.publish(topic, [{ key: "doc-1", value, headers }]);

      const seen = recorder();
      await subscribe({ group: unique("g"), topics: [topic], handler: seen.handler });
      await eventually(() => expect(seen.messages).toHaveLength(1));

      const [message] = seen.messages;
      expect(message.topic).toBe(topic);
      expect(message.key).toBe("doc-1");
      expect(Array.from(message.value)).toEqual(Array.from(value));
      expect(message.headers).toEqual(headers);
      expect(typeof message.offset).toBe("string");
      expect(message.offset.length).toBeGreaterThan(0);
      expect(message.timestamp).toBeInstanceOf(Date);
      expect(message.timestamp.getTime()).toBeGreaterThanOrEqual(before - 5_000);
      expect(message.timestamp.getTime()).toBeLessThanOrEqual(Date.now() + 5_000);
      await sleep(SETTLE_MS);
      expect(seen.messages).toHaveLength(1);
    });

    it("keeps per-key order for 100 messages over several keys", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("order");
      await bus.ensureTopics([topic]);
      const keys = ["doc-a", "doc-b", "doc-c", "doc-d"];
      const expected = new Map(keys.map((key) => [key, [] as string[]]));
      // Ten batches, keys interleaved inside each batch, as a busy pipeline would publish them.
      for (let batch = 0; batch < 10; batch++) {
        const messages = Array.from({ length: 10 }, (_, i) => {
          const n = batch * 10 + i;
          const key = keys[n % keys.length];
          const value = `${key}:${n}`;
          expected.get(key)!.push(value);
          return { key, value: bytes(value) };
        });
        await bus.publish(topic, messages);
      }

      const byKey = new Map(keys.map((key) => [key, [] as string[]]));
      await subscribe({
        group: unique("g"),
        topics: [topic],
        handler: async (message) => {
          byKey.get(message.key)!.push(text(message.value));
          // Uneven handling time must not reorder a key.
          if (Number(text(message.value).split(":")[1]) % 7 === 0) await sleep(2);
        },
      });
      await eventually(() => expect([...byKey.values()].flat()).toHaveLength(100));
      for (const key of keys) expect(byKey.get(key)).toEqual(expected.get(key));
    });

    it("with concurrency, handles messages of different keys at once and keeps each key in order", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("concurrent");
      await bus.ensureTopics([topic]);
      const keys = Array.from({ length: 8 }, (_, i) => `doc-${i}`);
      // Three rounds over eight keys; Kafka spreads the keys over partitions, and eight keys put at
      // least three on one partition, so some messages share a fetched batch either way.
      const messages = [0, 1, 2].flatMap((round) => keys.map((key) => ({ key, value: bytes(`${key}:${round}`) })));
      await bus.publish(topic, messages);

      const byKey = new Map(keys.map((key) => [key, [] as string[]]));
      const inHandKeys = new Set<string>();
      let inHand = 0;
      let mostInHand = 0;
      let sameKeyAtOnce = false;
      await subscribe({
        group: unique("g"),
        topics: [topic],
        concurrency: 4,
        handler: async (message) => {
          if (inHandKeys.has(message.key)) sameKeyAtOnce = true;
          inHandKeys.add(message.key);
          mostInHand = Math.max(mostInHand, ++inHand);
          await sleep(30);
          byKey.get(message.key)!.push(text(message.value));
          inHand--;
          inHandKeys.delete(message.key);
        },
      });
      await eventually(() => expect([...byKey.values()].flat()).toHaveLength(24));
      expect(sameKeyAtOnce).toBe(false);
      expect(mostInHand).toBeGreaterThan(1);
      expect(mostInHand).toBeLessThanOrEqual(4);
      for (const key of keys) expect(byKey.get(key)).toEqual([0, 1, 2].map((round) => `${key}:${round}`));
    });

    it("with concurrency, a message still unfinished at close comes back to the group; none is lost", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("concurrent-close");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      const values = numbered("m", 0, 6);
      await bus.publish(topic, values.map((value, i) => ({ key: `doc-${i}`, value: bytes(value) })));

      const first: string[] = [];
      const subscription = await subscribe({
        group,
        topics: [topic],
        concurrency: 6,
        retryBackoffMs: 60_000,
        handler: async (message) => {
          // m-0 fails and waits out a long backoff; close() cuts that wait short, leaving it unfinished.
          if (text(message.value) === "m-0") throw new Error("backend down");
          first.push(text(message.value));
        },
      });
      await eventually(() => expect(first.length).toBeGreaterThan(0));
      await sleep(SETTLE_MS);
      await subscription.close();
      expect(first).not.toContain("m-0");

      const second = recorder();
      await subscribe({ group, topics: [topic], handler: second.handler });
      await eventually(() => expect(second.values()).toContain("m-0"));
      await sleep(SETTLE_MS);
      expect(new Set([...first, ...second.values()])).toEqual(new Set(values));
    });

    it("with concurrency, a long message does not hold up messages published after it", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("behind-long");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      let finishLong!: () => void;
      const longMayFinish = new Promise<void>((resolve) => (finishLong = resolve));
      let longStarted = false;
      const handled: string[] = [];
      await subscribe({
        group,
        topics: [topic],
        concurrency: 4,
        handler: async (message) => {
          if (text(message.value) === "long") {
            longStarted = true;
            await longMayFinish;
          }
          handled.push(text(message.value));
        },
      });
      await publishValues(topic, ["long"], "huge-doc");
      await eventually(() => expect(longStarted).toBe(true));
      // Published while the long one runs, so the subscription must fetch them while it is in hand.
      const later = numbered("small", 0, 8);
      await bus.publish(topic, later.map((value, i) => ({ key: `doc-${i}`, value: bytes(value) })));
      await eventually(() => expect([...handled].sort()).toEqual([...later].sort()));
      finishLong();
      await eventually(() => expect(handled).toContain("long"));
      await sleep(SETTLE_MS);

      // All of them were committed once the long one was: a new member of the group gets nothing.
      await subscriptions.pop()!.close();
      const again = recorder();
      await subscribe({ group, topics: [topic], handler: again.handler });
      await publishValues(topic, ["marker"]);
      await eventually(() => expect(again.values()).toContain("marker"));
      expect(again.values()).toEqual(["marker"]);
    });

    it("close with a grace releases a message that outlasts it, uncommitted, and the group gets it again", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("grace");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      await publishValues(topic, ["quick", "endless"]);
      const first: string[] = [];
      const subscription = await subscribe({
        group,
        topics: [topic],
        handler: async (message) => {
          first.push(text(message.value));
          if (text(message.value) === "endless") await new Promise(() => {});
        },
      });
      await eventually(() => expect(first).toEqual(["quick", "endless"]));
      const started = Date.now();
      await subscription.close({ graceMs: 300 });
      expect(Date.now() - started).toBeLessThan(DELIVERY_TIMEOUT_MS);

      const second = recorder();
      await subscribe({ group, topics: [topic], handler: second.handler });
      await eventually(() => expect(second.values()).toEqual(["endless"]));
    });

    it("gives every group every message", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("groups");
      await bus.ensureTopics([topic]);
      const values = numbered("m", 0, 20);
      const first = recorder();
      const second = recorder();
      await subscribe({ group: unique("g1"), topics: [topic], handler: first.handler });
      await publishValues(topic, values.slice(0, 10));
      await subscribe({ group: unique("g2"), topics: [topic], handler: second.handler });
      await publishValues(topic, values.slice(10));

      await eventually(() => {
        expect(first.values()).toEqual(values);
        expect(second.values()).toEqual(values);
      });
      await sleep(SETTLE_MS);
      expect(first.values()).toEqual(values);
      expect(second.values()).toEqual(values);
    });

    it("counts what a group has not committed yet: the whole topic before it reads, nothing once it has", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("pending");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      const total = async () => (await bus.pending(group, topic)).reduce((sum, p) => sum + p.pending, 0);
      await publishValues(topic, numbered("m", 0, 5), "a");
      await publishValues(topic, numbered("n", 0, 4), "b");
      expect(await total()).toBe(9);
      const seen = recorder();
      await subscribe({ group, topics: [topic], handler: seen.handler });
      await eventually(() => expect(seen.messages).toHaveLength(9));
      // The commit follows the handler; the count reaches 0 once it is made.
      await vi.waitFor(async () => expect(await total()).toBe(0), { timeout: DELIVERY_TIMEOUT_MS, interval: 50 });
    });

    it("peeks at a topic's newest messages, oldest first, without consuming or committing any", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("peek");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      expect(await bus.peek(topic, 10)).toEqual([]);
      // Two keys, so on Kafka two partitions may hold the newest; apart in time, so the order is plain.
      await publishValues(topic, ["b-0"], "b");
      for (const value of numbered("a", 0, 5)) {
        await sleep(5);
        await publishValues(topic, [value], "a");
      }
      const newest = await bus.peek(topic, 3);
      expect(newest.map((message) => text(message.value))).toEqual(["a-2", "a-3", "a-4"]);
      expect(newest.every((message) => message.topic === topic && message.key === "a")).toBe(true);
      expect((await bus.peek(topic, 10)).map((message) => text(message.value))).toEqual(["b-0", ...numbered("a", 0, 5)]);
      expect((await bus.pending(group, topic)).reduce((sum, p) => sum + p.pending, 0)).toBe(6);
      const seen = recorder();
      await subscribe({ group, topics: [topic], handler: seen.handler });
      await eventually(() => expect(seen.messages).toHaveLength(6));
    });

    it("resumes a group after close without redelivering or losing messages", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("resume");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      const values = numbered("m", 0, 30);
      await publishValues(topic, values.slice(0, 20));

      const firstRun: string[] = [];
      let closing: Promise<void> | undefined;
      const first = await subscribe({
        group,
        topics: [topic],
        handler: async (message) => {
          firstRun.push(text(message.value));
          // Stop mid-stream, from inside the handler, like a service told to shut down.
          if (firstRun.length === 7) closing = first.close();
        },
      });
      await eventually(() => expect(closing).toBeDefined());
      await closing;
      const handledBeforeClose = firstRun.length;
      expect(handledBeforeClose).toBeGreaterThanOrEqual(7);
      expect(handledBeforeClose).toBeLessThan(20);

      await publishValues(topic, values.slice(20));
      const second = recorder();
      await subscribe({ group, topics: [topic], handler: second.handler });
      await eventually(() => expect(firstRun.length + second.messages.length).toBe(30));
      await sleep(SETTLE_MS);
      expect(firstRun).toHaveLength(handledBeforeClose);
      expect([...firstRun, ...second.values()]).toEqual(values);
    });

    it("close waits for the message in hand and commits it", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("close");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      await publishValues(topic, ["slow", "next"]);

      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const started: string[] = [];
      const finished: string[] = [];
      const subscription = await subscribe({
        group,
        topics: [topic],
        handler: async (message) => {
          started.push(text(message.value));
          if (text(message.value) === "slow") await released;
          finished.push(text(message.value));
        },
      });
      await eventually(() => expect(started).toEqual(["slow"]));
      let closed = false;
      const closing = subscription.close().then(() => (closed = true));
      await sleep(200);
      expect(closed).toBe(false);
      release();
      await closing;
      expect(finished[0]).toBe("slow");

      const after = recorder();
      await subscribe({ group, topics: [topic], handler: after.handler });
      // "next" arrives exactly once overall; "slow" was committed by close and never comes back.
      await eventually(() => expect([...finished.slice(1), ...after.values()]).toEqual(["next"]));
      await sleep(SETTLE_MS);
      expect(after.values()).not.toContain("slow");
      expect([...finished.slice(1), ...after.values()]).toEqual(["next"]);
    });

    it('"latest" sees only messages published after subscribing', { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("latest");
      await bus.ensureTopics([topic]);
      await publishValues(topic, numbered("old", 0, 5));
      const seen = recorder();
      await subscribe({ group: unique("watch"), topics: [topic], from: "latest", handler: seen.handler });
      const fresh = numbered("new", 0, 5);
      await publishValues(topic, fresh);
      await eventually(() => expect(seen.values()).toEqual(fresh));
      await sleep(SETTLE_MS);
      expect(seen.values()).toEqual(fresh);
    });

    it('"latest" commits nothing: a later "latest" subscriber in the same group does not resume', { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("latest-nocommit");
      const group = unique("watch");
      await bus.ensureTopics([topic]);
      const first = recorder();
      const watcher = await subscribe({ group, topics: [topic], from: "latest", handler: first.handler });
      await publishValues(topic, ["a"]);
      await eventually(() => expect(first.values()).toEqual(["a"]));
      await watcher.close();

      // An "earliest" subscriber of that group name starts from the beginning: the watcher left no position.
      const stage = recorder();
      await subscribe({ group, topics: [topic], handler: stage.handler });
      await eventually(() => expect(stage.values()).toEqual(["a"]));
    });

    it("retries a failing handler with backoff and then moves on", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("retry");
      await bus.ensureTopics([topic, deadLetterTopic(topic)]);
      await publishValues(topic, ["flaky", "steady"]);
      const attempts = new Map<string, number>();
      const handled: string[] = [];
      await subscribe({
        group: unique("g"),
        topics: [topic],
        maxAttempts: 5,
        ...FAST_RETRY,
        handler: async (message) => {
          const value = text(message.value);
          const attempt = (attempts.get(value) ?? 0) + 1;
          attempts.set(value, attempt);
          if (value === "flaky" && attempt <= 2) throw new Error(`flaky attempt ${attempt}`);
          handled.push(value);
        },
      });
      await eventually(() => expect(handled).toEqual(["flaky", "steady"]));
      await sleep(SETTLE_MS);
      expect(attempts.get("flaky")).toBe(3);
      expect(attempts.get("steady")).toBe(1);

      const dead = recorder();
      await subscribe({ group: unique("dlq"), topics: [deadLetterTopic(topic)], handler: dead.handler });
      await bus.publish(deadLetterTopic(topic), [{ key: "marker", value: bytes("marker") }]);
      await eventually(() => expect(dead.values()).toContain("marker"));
      expect(dead.values()).toEqual(["marker"]);
    });

    /**
     * Publishes a bad message then a good one to a fresh topic, fails the bad one with `failure` on
     * each attempt, and waits until the good one is handled and the bad one is on the dead-letter topic.
     */
    async function deadLetterRun(options: { prefix: string; badKey: string; badValue: string; trace: string; maxAttempts: number; failure: () => Error }) {
      const topic = unique(options.prefix);
      const group = unique("g");
      await bus.ensureTopics([topic, deadLetterTopic(topic)]);
      await bus.publish(topic, [
        { key: options.badKey, value: bytes(options.badValue), headers: { "x-trace": options.trace } },
        { key: "doc-good", value: bytes("fine") },
      ]);
      const run = { topic, group, attempts: 0, offset: "", handled: [] as string[], dead: recorder() };
      await subscribe({
        group,
        topics: [topic],
        maxAttempts: options.maxAttempts,
        ...FAST_RETRY,
        handler: async (message) => {
          if (text(message.value) === options.badValue) {
            run.attempts++;
            run.offset = message.offset;
            throw options.failure();
          }
          run.handled.push(text(message.value));
        },
      });
      await subscribe({ group: unique("dlq-reader"), topics: [deadLetterTopic(topic)], handler: run.dead.handler });
      await eventually(() => {
        expect(run.handled).toEqual(["fine"]);
        expect(run.dead.messages).toHaveLength(1);
      });
      return run;
    }

    it("tells a group's handler its message is its own, and gets a message whose handler lost it back, uncommitted and not dead-lettered", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("owned");
      const group = unique("group");
      const owned: boolean[] = [];
      const seen: string[] = [];
      const dead = recorder();
      await bus.ensureTopics([topic, deadLetterTopic(topic)]);
      await subscribe({ group: unique("dlq"), topics: [deadLetterTopic(topic)], handler: dead.handler });
      await subscribe({
        group,
        topics: [topic],
        maxAttempts: 1,
        ...FAST_RETRY,
        handler: async (message) => {
          seen.push(text(message.value));
          owned.push(message.owned?.() ?? false);
          // The first delivery finds its message gone elsewhere, as after a lapsed lease or a rebalance.
          if (seen.length === 1) throw new LeaseLostError(message);
        },
      });
      await publishValues(topic, ["job"]);
      await eventually(() => expect(seen).toEqual(["job", "job"]));
      await sleep(SETTLE_MS);
      expect(seen).toEqual(["job", "job"]);
      expect(owned).toEqual([true, true]);
      expect(dead.values()).toEqual([]);
    });

    it("dead-letters a rejected message at once, without retries, with the reason and the rejecting group in its headers", { timeout: TEST_TIMEOUT_MS }, async () => {
      const run = await deadLetterRun({
        prefix: "reject",
        badKey: "doc-junk",
        badValue: "junk",
        trace: "t-2",
        maxAttempts: 5,
        failure: () => new RejectedMessageError("the payload is not a Greeting"),
      });
      await sleep(SETTLE_MS);
      expect(run.attempts).toBe(1);
      const [letter] = run.dead.messages;
      expect(letter.key).toBe("doc-junk");
      expect(text(letter.value)).toBe("junk");
      expect(letter.headers["x-error"]).toBe("the payload is not a Greeting");
      expect(letter.headers[REJECTED_BY_HEADER]).toBe(run.group);
      expect(letter.headers["x-original-topic"]).toBe(run.topic);
      expect(letter.headers["x-original-offset"]).toBe(run.offset);
      expect(letter.headers["x-attempts"]).toBe("1");
      expect(letter.headers["x-trace"]).toBe("t-2");
    });

    it("dead-letters a message that keeps failing, with the error in its headers, and keeps going", { timeout: TEST_TIMEOUT_MS }, async () => {
      const run = await deadLetterRun({ prefix: "dlq", badKey: "doc-bad", badValue: "poison", trace: "t-1", maxAttempts: 3, failure: () => new TypeError("cannot parse poison") });
      expect(run.attempts).toBe(3);
      const [letter] = run.dead.messages;
      expect(letter.topic).toBe(deadLetterTopic(run.topic));
      expect(letter.key).toBe("doc-bad");
      expect(text(letter.value)).toBe("poison");
      expect(letter.headers["x-error"]).toContain("cannot parse poison");
      expect(letter.headers["x-original-topic"]).toBe(run.topic);
      expect(letter.headers["x-original-offset"]).toBe(run.offset);
      expect(letter.headers["x-attempts"]).toBe("3");
      expect(letter.headers["x-trace"]).toBe("t-1");

      // Later messages still flow, and the poison message is not retried again.
      await publishValues(run.topic, ["later"]);
      await eventually(() => expect(run.handled).toEqual(["fine", "later"]));
      await sleep(SETTLE_MS);
      expect(run.attempts).toBe(3);
      expect(run.dead.messages).toHaveLength(1);
    });

    it("shares a group's work between two subscriptions without double delivery", { timeout: TEST_TIMEOUT_MS }, async () => {
      const topic = unique("shared");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      const handled: string[] = [];
      const handler = async (message: BusMessage) => {
        handled.push(text(message.value));
      };
      const first = await subscribe({ group, topics: [topic], handler });
      await subscribe({ group, topics: [topic], handler });
      const values = numbered("m", 0, 40);
      // Several keys, so an implementation that splits work by key has something to split.
      for (let i = 0; i < 20; i++) await bus.publish(topic, [{ key: `doc-${i % 4}`, value: bytes(values[i]) }]);
      await eventually(() => expect(handled).toHaveLength(20));

      // One member leaves; the other carries on alone.
      await first.close();
      for (let i = 20; i < 40; i++) await bus.publish(topic, [{ key: `doc-${i % 4}`, value: bytes(values[i]) }]);
      await eventually(() => expect(handled).toHaveLength(40));
      await sleep(SETTLE_MS);
      expect([...handled].sort()).toEqual([...values].sort());
    });

    it("resumes on a fresh bus instance over the same storage", { timeout: TEST_TIMEOUT_MS }, async (context) => {
      if (!fixture.reopen) context.skip();
      const topic = unique("reopen");
      const group = unique("g");
      await bus.ensureTopics([topic]);
      const values = numbered("m", 0, 25);
      await publishValues(topic, values.slice(0, 15));

      const firstRun: string[] = [];
      const first = await subscribe({
        group,
        topics: [topic],
        handler: async (message) => {
          firstRun.push(text(message.value));
        },
      });
      await eventually(() => expect(firstRun).toHaveLength(15));
      await first.close();
      await bus.close();

      const reopened = await fixture.reopen!();
      await publishValues(topic, values.slice(15), "k", reopened);
      const secondRun = recorder();
      await subscribe({ group, topics: [topic], handler: secondRun.handler }, reopened);
      await eventually(() => expect(secondRun.values()).toEqual(values.slice(15)));
      await sleep(SETTLE_MS);
      expect([...firstRun, ...secondRun.values()]).toEqual(values);
    });
  });
}
