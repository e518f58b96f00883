import { logLevel } from "kafkajs";
import { describe, expect, it } from "vitest";
import { kafkaLogLevel } from "./kafka-log.ts";

const entry = (namespace: string, level: logLevel, message: string, extra: Record<string, unknown> = {}) => ({
  namespace,
  level,
  log: { message, timestamp: "", logger: "kafkajs", ...extra },
});

describe("kafkaLogLevel", () => {
  it("keeps a broker's error response that kafkajs retries or hands to its caller out of the warnings", () => {
    // The two a start-up on a fresh prefix and on existing topics printed as warnings.
    expect(kafkaLogLevel(entry("Connection", logLevel.ERROR, "Response ListOffsets(key: 2, version: 3)", { error: "This server is not the leader for that topic-partition" }))).toBe("debug");
    expect(kafkaLogLevel(entry("Connection", logLevel.ERROR, "Response CreateTopics(key: 19, version: 3)", { error: "Topic creation errors" }))).toBe("debug");
  });

  it("reports a consumer group's ordinary rebalance as information", () => {
    expect(kafkaLogLevel(entry("Runner", logLevel.ERROR, "The coordinator is not aware of this member, re-joining the group"))).toBe("info");
    expect(kafkaLogLevel(entry("Runner", logLevel.WARN, "The group is rebalancing, re-joining"))).toBe("info");
  });

  it("keeps real trouble at its level", () => {
    expect(kafkaLogLevel(entry("BrokerPool", logLevel.ERROR, "Failed to connect to broker, reconnecting"))).toBe("error");
    expect(kafkaLogLevel(entry("Consumer", logLevel.ERROR, "Crash: KafkaJSNumberOfRetriesExceeded: boom"))).toBe("error");
    expect(kafkaLogLevel(entry("Admin", logLevel.WARN, "Could not create topics"))).toBe("warn");
    // A connection error that is not a broker's response (the socket itself) stays an error.
    expect(kafkaLogLevel(entry("Connection", logLevel.ERROR, "Connection error: read ECONNRESET"))).toBe("error");
  });
});
