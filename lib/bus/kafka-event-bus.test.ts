import { Kafka, logLevel } from "kafkajs";
import { describeWithEngine } from "../../test/support/engines.ts";
import { describeEventBusContract } from "./testing/event-bus.contract.ts";
import { deadLetterTopic } from "./event-bus.ts";
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
});
