import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError, kafkaTopicSettings, optionalUrl, optionalUrls, peerUrl, searchIndexSettings, portVariable, ServiceNames, servicePort, ServicePorts, urlVariable } from "./config.ts";

describe("service ports and peer addresses", () => {
  it("default to the standard port table, on this machine", () => {
    expect(servicePort({}, "gateway")).toBe(8080);
    expect(servicePort({}, "embedder")).toBe(8083);
    expect(peerUrl({}, "embedder")).toBe("http://127.0.0.1:8083");
    expect(peerUrl({}, "index")).toBe(`http://127.0.0.1:${ServicePorts.index}`);
  });

  it("follow a service's port variable, so one set of ports shared by all six processes is enough", () => {
    const env = { QUARRY_EMBEDDER_PORT: "9183", QUARRY_PORT: "9180" };
    expect(servicePort(env, "embedder")).toBe(9183);
    expect(servicePort(env, "gateway")).toBe(9180);
    expect(peerUrl(env, "embedder")).toBe("http://127.0.0.1:9183");
  });

  it("move all six with QUARRY_BASE_PORT, a port variable still winning for its service", () => {
    const env = { QUARRY_BASE_PORT: "19080", QUARRY_INDEX_PORT: "19999" };
    expect(["gateway", "parser", "chunker", "embedder", "answer"].map((s) => servicePort(env, s as never))).toEqual([19080, 19081, 19082, 19083, 19085]);
    expect(servicePort(env, "index")).toBe(19999);
    expect(peerUrl(env, "answer")).toBe("http://127.0.0.1:19085");
  });

  it("take QUARRY_<SERVICE>_URL over any port", () => {
    expect(peerUrl({ QUARRY_EMBEDDER_URL: "http://embedder.internal:7000/", QUARRY_EMBEDDER_PORT: "1" }, "embedder")).toBe("http://embedder.internal:7000");
  });

  it("name the variable when a value is unusable", () => {
    expect(() => peerUrl({ QUARRY_EMBEDDER_URL: "notaurl" }, "embedder")).toThrow(new ConfigError('QUARRY_EMBEDDER_URL must be an http:// or https:// URL such as http://127.0.0.1:8083, not "notaurl"'));
    expect(() => peerUrl({ QUARRY_INDEX_URL: "ftp://x" }, "index")).toThrow(/QUARRY_INDEX_URL must be an http/);
    expect(() => servicePort({ QUARRY_CHUNKER_PORT: "70000" }, "chunker")).toThrow(/QUARRY_CHUNKER_PORT must be a port number/);
    expect(() => servicePort({ QUARRY_BASE_PORT: "65533" }, "answer")).toThrow(/QUARRY_BASE_PORT must leave room/);
    expect(() => peerUrl({ QUARRY_PARSER_PORT: "0" }, "parser")).toThrow(/set QUARRY_PARSER_URL/);
  });
});

describe("the README's port table", () => {
  it("is the table in code: each service's port, port variable and address variable", () => {
    const readme = readFileSync(resolve(import.meta.dirname, "../README.md"), "utf8");
    const rows = ServiceNames.map((name) => {
      const row = new RegExp(`^\\| ${name} \\| (\\d+) \\| \`([A-Z_]+)\` \\| ([^|]+) \\|`, "m").exec(readme);
      return row && { name, port: Number(row[1]), portVariable: row[2], urlVariable: /`([A-Z_]+)`/.exec(row[3])?.[1] };
    });
    expect(rows).toEqual(
      ServiceNames.map((name) => ({ name, port: ServicePorts[name], portVariable: portVariable(name), urlVariable: name === "gateway" ? "QUARRY_URL" : urlVariable(name) })),
    );
  });
});

describe("optionalUrl", () => {
  it("passes an http(s) address through and an unset one as undefined", () => {
    expect(optionalUrl({ TIKA_URL: "http://127.0.0.1:9998" }, "TIKA_URL")).toBe("http://127.0.0.1:9998");
    expect(optionalUrl({ OPENAI_BASE_URL: " https://api.example.com/v1 " }, "OPENAI_BASE_URL")).toBe("https://api.example.com/v1");
    expect(optionalUrl({ TIKA_URL: "" }, "TIKA_URL")).toBeUndefined();
    expect(optionalUrl({}, "TIKA_URL")).toBeUndefined();
  });

  it("names the variable when the value is no URL, or not an http(s) one", () => {
    for (const value of ["notaurl", "127.0.0.1:9200", "ftp://host/x"]) {
      const read = () => optionalUrl({ OPENSEARCH_URL: value }, "OPENSEARCH_URL");
      expect(read).toThrow(ConfigError);
      expect(read).toThrow(`OPENSEARCH_URL must be an http:// or https:// URL, not "${value}"`);
    }
  });
});

describe("engine replication settings", () => {
  it("leave replication to the cluster's size when unset, and keep three partitions", () => {
    expect(kafkaTopicSettings({})).toEqual({ partitions: 3 });
    expect(searchIndexSettings({})).toEqual({ shards: 1 });
  });

  it("take explicit partitions, replication, shards and replicas (0 replicas is a choice, not unset)", () => {
    expect(kafkaTopicSettings({ QUARRY_KAFKA_PARTITIONS: "12", QUARRY_KAFKA_REPLICATION: "2" })).toEqual({ partitions: 12, replication: 2 });
    expect(searchIndexSettings({ QUARRY_OPENSEARCH_SHARDS: "4", QUARRY_OPENSEARCH_REPLICAS: "0" })).toEqual({ shards: 4, replicas: 0 });
  });

  it("refuse counts that cannot work, naming the variable", () => {
    expect(() => kafkaTopicSettings({ QUARRY_KAFKA_REPLICATION: "0" })).toThrow(/QUARRY_KAFKA_REPLICATION must be 1 or more/);
    expect(() => kafkaTopicSettings({ QUARRY_KAFKA_PARTITIONS: "three" })).toThrow(/QUARRY_KAFKA_PARTITIONS must be a whole number/);
    expect(() => searchIndexSettings({ QUARRY_OPENSEARCH_SHARDS: "0" })).toThrow(ConfigError);
    expect(() => searchIndexSettings({ QUARRY_OPENSEARCH_REPLICAS: "-1" })).toThrow(/QUARRY_OPENSEARCH_REPLICAS/);
  });
});

describe("several node addresses", () => {
  it("split on commas and check each one", () => {
    expect(optionalUrls({ OPENSEARCH_URL: "http://a:9200, http://b:9200" }, "OPENSEARCH_URL")).toEqual(["http://a:9200", "http://b:9200"]);
    expect(optionalUrls({}, "OPENSEARCH_URL")).toBeUndefined();
    expect(() => optionalUrls({ OPENSEARCH_URL: "http://a:9200,b:9200" }, "OPENSEARCH_URL")).toThrow(/OPENSEARCH_URL must be an http:\/\/ or https:\/\/ URL, or several separated by commas/);
  });
});
