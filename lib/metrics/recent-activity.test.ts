import { describe, expect, it } from "vitest";
import { PrometheusMetrics } from "./prometheus-metrics.ts";
import { RecentActivity } from "./recent-activity.ts";

const PUBLIC = "quarry.gateway.v1.QuarryService";

function activity() {
  let now = Date.parse("2026-01-01T10:00:00Z");
  const inner = new PrometheusMetrics({ defaultMetrics: false });
  const recent = new RecentActivity(inner, { requestsOf: (s) => s === PUBLIC, now: () => now });
  return { inner, recent, advance: (ms: number) => (now += ms) };
}

describe("RecentActivity", () => {
  it("sums a stage's outcomes and failures by reason over the last hour, and forgets older minutes", async () => {
    const { inner, recent, advance } = activity();
    recent.stageStarted("parser");
    recent.stageEnded("parser", "retrying", 0.1, "unavailable");
    advance(30 * 60_000);
    for (const outcome of ["handled", "handled", "failed"] as const) {
      recent.stageStarted("parser");
      recent.stageEnded("parser", outcome, 0.1, outcome === "failed" ? "invalid_input" : undefined);
    }
    recent.deadLettered("parser", false);
    recent.stageStarted("embedder");

    const [parser, embedder] = recent.stages();
    expect(parser).toMatchObject({ stage: "parser", handled: 2, failed: 1, retrying: 1, deadLettered: 1, inFlight: 0 });
    expect(Object.fromEntries(parser.failures)).toEqual({ unavailable: 1, invalid_input: 1 });
    expect(embedder).toMatchObject({ stage: "embedder", handled: 0, inFlight: 1 });
    // What the registry counts is unchanged by the wrapper.
    expect((await inner.stageCounts()).find((s) => s.stage === "parser")).toMatchObject({ handled: 2, failed: 1, retrying: 1, deadLettered: 1 });

    advance(31 * 60_000);
    const later = recent.stages().find((s) => s.stage === "parser")!;
    expect(later).toMatchObject({ handled: 2, failed: 1, retrying: 0 });
    expect(Object.fromEntries(later.failures)).toEqual({ invalid_input: 1 });
  });

  it("keeps the slowest public requests of the hour with their trace ids, slowest first", () => {
    const { recent, advance } = activity();
    recent.rpc(PUBLIC, "Chat", "ok", 2.5, "a".repeat(32));
    recent.rpc("quarry.answer.v1.AnswerService", "Chat", "ok", 2.4);
    recent.rpc(PUBLIC, "Search", "unavailable", 0.3);
    for (let i = 0; i < 30; i++) recent.rpc(PUBLIC, "GetDocument", "ok", 0.001);
    const slowest = recent.slowestRequests();
    expect(slowest.slice(0, 2).map((r) => [r.method, r.seconds, r.code, r.traceId])).toEqual([
      ["Chat", 2.5, "ok", "a".repeat(32)],
      ["Search", 0.3, "unavailable", ""],
    ]);
    expect(slowest.length).toBe(20);
    expect(slowest.some((r) => r.seconds === 2.4)).toBe(false);
    advance(61 * 60_000);
    expect(recent.slowestRequests()).toEqual([]);
  });
});
