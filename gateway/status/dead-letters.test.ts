// The dead-letter list on the real Kafka: letters the bus itself dead-lettered (a handler rejecting
// two documents, which Kafka's partitioner may spread over partitions with equal offsets) are listed
// with their reasons under distinct ids, nothing is consumed by listing, and a re-drive sends the
// chosen one back to its stage's topic.
import { randomUUID } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { describeWithEngine } from "../../test/support/engines.ts";
import { deadLetterTopic, RejectedMessageError, Topics, type BusMessage } from "../../lib/bus/event-bus.ts";
import { KafkaEventBus } from "../../lib/bus/kafka-event-bus.ts";
import { PrefixedEventBus } from "../../lib/bus/prefixed-event-bus.ts";
import type { DocumentRecord } from "../../lib/domain.ts";
import { DeadLetters, REDRIVEN_BY_HEADER } from "./dead-letters.ts";

describeWithEngine("KAFKA_BROKERS", "DeadLetters on Kafka", (address) => {
  const brokers = address.split(",").map((broker) => broker.trim());
  const prefix = `test-dead-letters-${randomUUID().slice(0, 8)}.`;
  const kafka = new KafkaEventBus({ brokers, clientId: "quarry-dead-letters-test", sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500, maxWaitTimeInMs: 100 });
  const bus = new PrefixedEventBus(kafka, prefix);
  const documents = Array.from({ length: 6 }, (_, i) => `doc-${i}-${randomUUID().slice(0, 6)}`);

  beforeAll(async () => {
    await bus.ensureTopics([Topics.chunksCreated]);
    const dead = new Set<string>();
    const subscription = await bus.subscribe({
      group: "embedder",
      topics: [Topics.chunksCreated],
      handler: async (message) => {
        throw new RejectedMessageError(`no chunks for ${message.key}`);
      },
      onDeadLetter: () => {},
    });
    await bus.publish(Topics.chunksCreated, documents.map((key) => ({ key, value: new TextEncoder().encode(key) })));
    await vi.waitFor(async () => {
      for (const message of await bus.peek(deadLetterTopic(Topics.chunksCreated), 50)) dead.add(message.key);
      expect(dead.size).toBe(documents.length);
    }, { timeout: 60_000, interval: 500 });
    await subscription.close();
  }, 120_000);

  afterAll(async () => {
    await kafka.close();
    const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const ours = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
      if (ours.length > 0) await admin.deleteTopics({ topics: ours });
    } finally {
      await admin.disconnect();
    }
  });

  // A rejected letter whose document the catalog does not know stays listed; none of these exist.
  const deadLetters = new DeadLetters({ bus, document: async (): Promise<DocumentRecord | undefined> => undefined });

  it("lists every document's letter with its reason under an id of its own, and listing consumes nothing", { timeout: 120_000 }, async () => {
    const listed = await deadLetters.list();
    expect(listed.map((entry) => entry.documentId).sort()).toEqual([...documents].sort());
    for (const entry of listed) {
      expect(entry.stage).toBe("embedder");
      expect(entry.rejected).toBe(true);
      expect(entry.reason).toBe(`no chunks for ${entry.documentId}`);
      expect(entry.id).toMatch(/^embedder:\d+-\d+$/);
    }
    expect(new Set(listed.map((entry) => entry.id)).size).toBe(documents.length);
    // The letters are still there for the redrive consumer, and a second look sees the same.
    const waiting = await bus.pending("embedder.redrive", deadLetterTopic(Topics.chunksCreated));
    expect(waiting.reduce((sum, p) => sum + p.pending, 0)).toBe(documents.length);
    expect((await deadLetters.list()).map((entry) => entry.id).sort()).toEqual(listed.map((entry) => entry.id).sort());
  });

  it("re-drives the chosen letter back to its stage's topic", { timeout: 120_000 }, async () => {
    const [chosen] = await deadLetters.list();
    const back: BusMessage[] = [];
    const watcher = await bus.subscribe({ group: "watch", topics: [Topics.chunksCreated], from: "latest", handler: async (message) => void back.push(message) });
    try {
      await deadLetters.redrive({ ids: [chosen.id], all: false });
      await vi.waitFor(() => expect(back.map((message) => message.key)).toEqual([chosen.documentId]), { timeout: 60_000, interval: 200 });
      expect(back[0].headers[REDRIVEN_BY_HEADER]).toBe("operator");
    } finally {
      await watcher.close();
    }
  });
});
