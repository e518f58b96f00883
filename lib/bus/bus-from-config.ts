// Picks the event bus: Kafka when KAFKA_BROKERS is set, else the durable SQLite log.
import { mkdirSync } from "node:fs";
import { dataDir, kafkaTopicSettings, optional, sqlitePath, type Env } from "../config.ts";
import type { Logger } from "../logger.ts";
import { Topics, type EventBus } from "./event-bus.ts";
import { PrefixedEventBus } from "./prefixed-event-bus.ts";
import { TracedEventBus } from "./traced-event-bus.ts";

export async function openEventBus(env: Env, logger: Logger): Promise<EventBus> {
  const brokers = optional(env, "KAFKA_BROKERS");
  let bus: EventBus;
  if (brokers) {
    const { KafkaEventBus } = await import("./kafka-event-bus.ts");
    const { kafkaSecurity } = await import("./kafka-security.ts");
    const topics = kafkaTopicSettings(env);
    bus = new KafkaEventBus({
      brokers: brokers.split(",").map((b) => b.trim()),
      clientId: optional(env, "QUARRY_KAFKA_CLIENT_ID") ?? "quarry",
      numPartitions: topics.partitions,
      replicationFactor: topics.replication,
      logger,
      security: kafkaSecurity(env),
    });
  } else {
    const { SqliteEventBus } = await import("./sqlite-event-bus.ts");
    // `quarry serve <service>` without Kafka opens the log before anything else made the folder.
    mkdirSync(dataDir(env), { recursive: true });
    bus = new SqliteEventBus(sqlitePath(env), { logger });
  }
  const prefix = optional(env, "QUARRY_TOPIC_PREFIX");
  if (prefix) bus = new PrefixedEventBus(bus, prefix);
  bus = new TracedEventBus(bus, brokers ? "kafka" : "sqlite");
  await bus.ensureTopics(Object.values(Topics));
  return bus;
}
