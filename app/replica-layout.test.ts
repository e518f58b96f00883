import { describe, expect, it } from "vitest";
import { ConfigError } from "../lib/config.ts";
import { checkReplicaEngines, replicaPorts, replicaSlots } from "./replica-layout.ts";

describe("replica layout of quarry serve all", () => {
  it("with one replica is the standard layout, from --port on", () => {
    expect(replicaPorts({}, 1)).toEqual({ gateway: [8080], parser: [8081], chunker: [8082], embedder: [8083], index: [8084], answer: [8085] });
    expect(replicaSlots({ QUARRY_BASE_PORT: "9000" }, 1).map((s) => `${s.label}:${s.port}`)).toEqual([
      "gateway:9000",
      "parser:9001",
      "chunker:9002",
      "embedder:9003",
      "index:9004",
      "answer:9005",
    ]);
  });

  it("gives each service N consecutive ports, and each replica its column's peers", () => {
    expect(replicaPorts({ QUARRY_BASE_PORT: "9000" }, 2)).toEqual({
      gateway: [9000, 9001],
      parser: [9002, 9003],
      chunker: [9004, 9005],
      embedder: [9006, 9007],
      index: [9008, 9009],
      answer: [9010, 9011],
    });
    const slots = replicaSlots({ QUARRY_BASE_PORT: "9000" }, 2);
    expect(slots.map((s) => s.label)).toEqual(["gateway-1", "parser-1", "chunker-1", "embedder-1", "index-1", "answer-1", "gateway-2", "parser-2", "chunker-2", "embedder-2", "index-2", "answer-2"]);
    const gateway2 = slots.find((s) => s.label === "gateway-2")!;
    expect(gateway2.port).toBe(9001);
    expect(gateway2.ports).toMatchObject({ QUARRY_PORT: "9001", QUARRY_INDEX_PORT: "9009", QUARRY_ANSWER_PORT: "9011" });
  });

  it("starts a service's block at its own port variable when one is set, and refuses to run past 65535", () => {
    expect(replicaPorts({ QUARRY_BASE_PORT: "9000", QUARRY_ANSWER_PORT: "7000" }, 3).answer).toEqual([7000, 7001, 7002]);
    expect(() => replicaPorts({ QUARRY_BASE_PORT: "65520" }, 3)).toThrow(/run past 65535; choose a lower --port/);
    expect(() => replicaPorts({}, 0)).toThrow(ConfigError);
  });

  it("needs Kafka and OpenSearch for more than one replica, naming what is missing", () => {
    expect(() => checkReplicaEngines({}, 1)).not.toThrow();
    expect(() => checkReplicaEngines({ KAFKA_BROKERS: "k:9092" }, 2)).toThrow("--replicas 2 needs engines the replicas share: set OPENSEARCH_URL (the catalog and chunks every replica shares)");
    expect(() => checkReplicaEngines({}, 2)).toThrow(/set KAFKA_BROKERS .* and OPENSEARCH_URL/);
    expect(() => checkReplicaEngines({ KAFKA_BROKERS: "k:9092", ELASTICSEARCH_URL: "http://e:9200" }, 2)).not.toThrow();
  });
});
