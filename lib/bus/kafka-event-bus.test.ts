import { randomUUID } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { expect, it, vi } from "vitest";
import { describeWithEngine } from "../../test/support/engines.ts";
import { describeEventBusContract } from "./testing/event-bus.contract.ts";
import { deadLetterTopic, type BusMessage, type Subscription } from "./event-bus.ts";
import { KafkaEventBus, type KafkaEventBusOptions } from "./kafka-event-bus.ts";

describeWithEngine("KAFKA_BROKERS", "KafkaEventBus", (address) => {
  const brokers = address.split(",").map((broker) => broker.trim());
  // Short group timings so joins, leaves and takeovers happen within a test's patience.
  const options: KafkaEventBusOptions = {
    brokers,
    clientId: "quarry-contract",
    numPartitions: 3,
    sessionTimeoutMs: 6_000,
    heartbeatIntervalMs: 500,
    rebalanceTimeoutMs: 10_000,
    maxWaitTimeInMs: 100,
  };

  describeEventBusContract("Kafka", async () => {
    const created = new Set<string>();
    // Remembers every topic the suite asked for, so cleanup can delete them from the shared broker.
    class TrackingBus extends KafkaEventBus {
      override async ensureTopics(topics: string[]): Promise<void> {
        for (const topic of topics) {
          created.add(topic);
          if (!topic.endsWith(".dlq")) created.add(deadLetterTopic(topic));
        }
        await super.ensureTopics(topics);
      }
    }
    const buses: KafkaEventBus[] = [new TrackingBus(options)];
    return {
      bus: buses[0],
      reopen: async () => {
        const bus = new TrackingBus(options);
        buses.push(bus);
        return bus;
      },
      cleanup: async () => {
        for (const bus of buses) await bus.close();
        if (created.size === 0) return;
        const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
        await admin.connect();
        try {
          const existing = new Set(await admin.listTopics());
          await admin.deleteTopics({ topics: [...created].filter((topic) => existing.has(topic)) });
        } finally {
          await admin.disconnect();
        }
      },
    };
  });

  // A rebalance can take a partition away while its message is still in hand: the handler runs on
  // (owned() turns false) and its heartbeats must stop quietly. They once threw from their timer
  // (the partition's batch had gone with it), and the uncaught error ended the process: the cluster
  // fault test lost an index replica to a broker kill that way.
  // kafkajs's round-robin assignor gives the only partition to the member whose id sorts first, and
  // the broker prefixes member ids with the client id: a joiner named to sort first takes it at the
  // first rebalance (waiting for the assignor to move it by chance failed a loaded CI run).
  it("keeps running while the handler of a partition a rebalance took away goes on", { timeout: 180_000 }, async () => {
    const topic = `kafka-bus.revoked.${randomUUID().slice(0, 8)}`;
    const group = `kafka-bus.revoked.${randomUUID().slice(0, 8)}`;
    // One partition, so the member that joins either takes it or gets nothing.
    const bus = new KafkaEventBus({ ...options, clientId: "quarry-contract-z", numPartitions: 1 });
    const joiner = new KafkaEventBus({ ...options, clientId: "quarry-contract-a", numPartitions: 1 });
    const uncaught: unknown[] = [];
    const recordUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", recordUncaught);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let inHand: BusMessage | undefined;
    const subscriptions: Subscription[] = [];
    try {
      await bus.ensureTopics([topic]);
      subscriptions.push(await bus.subscribe({ group, topics: [topic], handler: async (message) => ((inHand ??= message), await released) }));
      await bus.publish(topic, [{ key: "k", value: new TextEncoder().encode("slow") }]);
      await vi.waitFor(() => expect(inHand).toBeDefined(), { timeout: 60_000, interval: 50 });
      expect(inHand!.owned!()).toBe(true);
      subscriptions.push(await joiner.subscribe({ group, topics: [topic], handler: async () => {} }));
      // The rebalance waits for the busy member to rejoin, up to the rebalance timeout.
      await vi.waitFor(() => expect(inHand!.owned!(), "the partition moved to the member that joined").toBe(false), { timeout: 120_000, interval: 100 });
      // Several heartbeat intervals with the revoked message still in hand.
      await new Promise((resolve) => setTimeout(resolve, 5 * options.heartbeatIntervalMs!));
      expect(uncaught).toEqual([]);
    } finally {
      release();
      process.off("uncaughtException", recordUncaught);
      for (const subscription of subscriptions) await subscription.close({ graceMs: 0 }).catch(() => {});
      await bus.close();
      await joiner.close();
      const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic, deadLetterTopic(topic)] }).catch(() => {});
      await admin.disconnect();
    }
  });
});
