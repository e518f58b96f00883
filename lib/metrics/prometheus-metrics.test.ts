import { describe, expect, it } from "vitest";
import { ConfigError } from "../config.ts";
import { noMetrics } from "./metrics.ts";
import { PrometheusMetrics, processMetrics } from "./prometheus-metrics.ts";

describe("processMetrics", () => {
  it("records into a Prometheus registry unless QUARRY_METRICS=off, and refuses any other value", async () => {
    const on = processMetrics({});
    expect(on).toBeInstanceOf(PrometheusMetrics);
    on.search("bm25", "sqlite", 0.02);
    expect((await on.exposition())!.text).toMatch(/^quarry_search_duration_seconds_count\{mode="bm25",backend="sqlite"\} 1$/m);
    expect(processMetrics({ QUARRY_METRICS: "ON" })).toBeInstanceOf(PrometheusMetrics);
    expect(processMetrics({ QUARRY_METRICS: "off" })).toBe(noMetrics);
    expect(await processMetrics({ QUARRY_METRICS: "off" }).exposition()).toBeUndefined();
    expect(() => processMetrics({ QUARRY_METRICS: "sometimes" })).toThrow(ConfigError);
  });

  it("counts an answer's citations by verdict and its outcome", async () => {
    const metrics = new PrometheusMetrics({ defaultMetrics: false });
    metrics.answer({ firstTokenSeconds: 0.1, seconds: 0.5, abstained: false, citations: 3, unsupportedCitations: 1 });
    metrics.answer({ seconds: 0.2, abstained: true, citations: 0, unsupportedCitations: 0 });
    const text = (await metrics.exposition()).text;
    expect(text).toMatch(/^quarry_answer_citations_total\{verdict="supported"\} 2$/m);
    expect(text).toMatch(/^quarry_answer_citations_total\{verdict="unsupported"\} 1$/m);
    expect(text).toMatch(/^quarry_answers_total\{outcome="abstained"\} 1$/m);
    expect(text).toMatch(/^quarry_answer_first_token_seconds_count 1$/m);
    expect(text).toMatch(/^quarry_answer_duration_seconds_count 2$/m);
  });
});
