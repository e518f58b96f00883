// Kafka SASL/TLS settings: parsed from the environment with clear errors, and carried to kafkajs —
// shown on the real (plaintext) broker, which answers a SASL handshake with a SASL-state error
// while the same bus without the settings connects.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../config.ts";
import { engineAddress } from "../../test/support/engines.ts";
import { KafkaEventBus } from "./kafka-event-bus.ts";
import { kafkaSecurity } from "./kafka-security.ts";

describe("kafkaSecurity", () => {
  it("reads SASL and TLS from KAFKA_* variables", () => {
    expect(kafkaSecurity({})).toEqual({});
    expect(kafkaSecurity({ KAFKA_SASL_MECHANISM: "SCRAM-SHA-512", KAFKA_SASL_USERNAME: "quarry", KAFKA_SASL_PASSWORD: "pw", KAFKA_SSL: "true" })).toEqual({
      ssl: true,
      sasl: { mechanism: "scram-sha-512", username: "quarry", password: "pw" },
    });
    const dir = mkdtempSync(join(tmpdir(), "quarry-kafka-ca-"));
    try {
      writeFileSync(join(dir, "ca.pem"), "CA");
      expect(kafkaSecurity({ KAFKA_SSL_CA_FILE: join(dir, "ca.pem") })).toEqual({ ssl: { ca: [Buffer.from("CA")] } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails at start-up on an unknown mechanism, missing credentials or a bad KAFKA_SSL", () => {
    expect(() => kafkaSecurity({ KAFKA_SASL_MECHANISM: "gssapi", KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "p" })).toThrow(/KAFKA_SASL_MECHANISM must be one of plain, scram-sha-256, scram-sha-512/);
    expect(() => kafkaSecurity({ KAFKA_SASL_MECHANISM: "plain" })).toThrow(/set KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD too/);
    expect(() => kafkaSecurity({ KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "p" })).toThrow(/KAFKA_SASL_MECHANISM is not/);
    expect(() => kafkaSecurity({ KAFKA_SSL: "yes" })).toThrow(ConfigError);
    expect(() => kafkaSecurity({ KAFKA_SSL_CA_FILE: "/no/such/ca.pem" })).toThrow(/KAFKA_SSL_CA_FILE names \/no\/such\/ca\.pem/);
  });
});

const brokers = engineAddress("KAFKA_BROKERS");
describe.skipIf(!brokers)("Kafka SASL settings on a real broker", () => {
  it("reach kafkajs: the plaintext broker refuses the SASL handshake, the same bus without SASL connects", async () => {
    const list = brokers!.split(",").map((b) => b.trim());
    const topic = `test.sasl.${randomBytes(4).toString("hex")}`;
    const secured = new KafkaEventBus({ brokers: list, security: kafkaSecurity({ KAFKA_SASL_MECHANISM: "plain", KAFKA_SASL_USERNAME: "quarry", KAFKA_SASL_PASSWORD: "pw" }) });
    const error = await secured.ensureTopics([topic]).then(() => undefined, (e: unknown) => e as Error & { cause?: unknown });
    await secured.close().catch(() => undefined);
    expect(error, "a SASL handshake against a plaintext listener must fail").toBeDefined();
    expect(String(error!.cause)).toMatch(/SASL/);
    const plain = new KafkaEventBus({ brokers: list, security: kafkaSecurity({}) });
    try {
      await plain.ensureTopics([topic]);
    } finally {
      await plain.close();
      const admin = new Kafka({ brokers: list, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
      await admin.disconnect();
    }
  }, 60_000);
});
