import { describe, expect, it } from "vitest";
import { ConfigError } from "../lib/config.ts";
import { evalTargetEnv } from "./run-eval.ts";

const ENGINES = { OPENSEARCH_URL: "http://127.0.0.1:9200", ELASTICSEARCH_URL: "http://127.0.0.1:9201", KAFKA_BROKERS: "127.0.0.1:9092", TIKA_URL: "http://127.0.0.1:9998" };

describe("the environment an evaluation's Quarry runs in", () => {
  it("reaches only the backend under test: SQLite with every engine variable set stays SQLite", () => {
    const { env, engine } = evalTargetEnv("embedded", ENGINES);
    expect(engine).toBeUndefined();
    expect([env.OPENSEARCH_URL, env.ELASTICSEARCH_URL, env.KAFKA_BROKERS, env.TIKA_URL]).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("runs on Elasticsearch under a prefix of its own, with OpenSearch out of reach", () => {
    const first = evalTargetEnv("elasticsearch", ENGINES).env;
    const second = evalTargetEnv("elasticsearch", ENGINES).env;
    expect(first.ELASTICSEARCH_URL).toBe(ENGINES.ELASTICSEARCH_URL);
    expect(first.OPENSEARCH_URL).toBeUndefined();
    expect(first.QUARRY_ELASTICSEARCH_PREFIX).toMatch(/^quarry-eval-[0-9a-f]{8}$/);
    expect(second.QUARRY_ELASTICSEARCH_PREFIX).not.toBe(first.QUARRY_ELASTICSEARCH_PREFIX);
    const opensearch = evalTargetEnv("opensearch", ENGINES).env;
    expect([opensearch.OPENSEARCH_URL, opensearch.ELASTICSEARCH_URL]).toEqual([ENGINES.OPENSEARCH_URL, undefined]);
  });

  it("refuses an engine backend whose variable is unset, naming it", () => {
    expect(() => evalTargetEnv("elasticsearch", { OPENSEARCH_URL: ENGINES.OPENSEARCH_URL })).toThrow(
      new ConfigError("--backend elasticsearch needs ELASTICSEARCH_URL (start it with deploy/local/engines.sh up elasticsearch)"),
    );
  });
});
