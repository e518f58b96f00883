// The Metrics of one process in a prom-client registry: what /metrics exposes and what the status
// RPC reads. The one module that imports prom-client (`npm run check` holds that line).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { BacklogRow, BacklogSource, Exposition, FailureClass, Metrics, StageOutcome } from "./metrics.ts";

/** Request latencies: 5 ms to a minute (a chat turn with a slow model). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** A stage's event: a tiny text parses in milliseconds, a large PDF embeds for minutes. */
const STAGE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** One stage's counts, as the status RPC reports them. */
export interface StageCounts {
  stage: string;
  handled: number;
  failed: number;
  retrying: number;
  rejected: number;
  deadLettered: number;
  inFlight: number;
}

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly backlogSources: BacklogSource[] = [];
  private readonly rpcDuration: Histogram<"service" | "method" | "code">;
  private readonly stageEvents: Counter<"stage" | "outcome">;
  private readonly stageFailures: Counter<"stage" | "reason">;
  private readonly stageDeadLettered: Counter<"stage" | "kind">;
  private readonly stageDuration: Histogram<"stage" | "outcome">;
  private readonly stageInFlight: Gauge<"stage">;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.rpcDuration = new Histogram({
      name: "quarry_rpc_server_duration_seconds",
      help: "RPCs a service answered, by service, method and Connect code; _count is the number of calls.",
      labelNames: ["service", "method", "code"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.stageEvents = new Counter({
      name: "quarry_stage_events_total",
      help: "Ingestion events a stage finished, by outcome: handled, failed (the document failed), retrying (a backend failed; the bus retries), rejected (dead-lettered at once).",
      labelNames: ["stage", "outcome"],
      registers,
    });
    this.stageFailures = new Counter({
      name: "quarry_stage_failures_total",
      help: "Ingestion events a stage failed (failed, retrying or rejected), by the failure's class.",
      labelNames: ["stage", "reason"],
      registers,
    });
    this.stageDeadLettered = new Counter({
      name: "quarry_stage_dead_lettered_total",
      help: "Events that reached a stage's dead-letter topic: after every retry (retries_exhausted) or at once (rejected).",
      labelNames: ["stage", "kind"],
      registers,
    });
    this.stageDuration = new Histogram({
      name: "quarry_stage_event_duration_seconds",
      help: "How long a stage took over one ingestion event, by outcome.",
      labelNames: ["stage", "outcome"],
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.stageInFlight = new Gauge({ name: "quarry_stage_documents_in_flight", help: "Ingestion events a stage is handling now.", labelNames: ["stage"], registers });
    const sources = this.backlogSources;
    new Gauge({
      name: "quarry_bus_pending_events",
      help: "Events of a topic its consumer group has not committed yet (Kafka: the consumer lag), by group, topic and partition.",
      labelNames: ["group", "topic", "partition"],
      registers,
      async collect() {
        this.reset();
        for (const row of await readBacklog(sources)) this.set({ group: row.group, topic: row.topic, partition: row.partition }, row.pending);
      },
    });
  }

  /** The Prometheus text exposition of everything recorded (and the backlog, read now). */
  async exposition(): Promise<Exposition> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  rpc(service: string, method: string, code: string, seconds: number): void {
    this.rpcDuration.observe({ service, method, code }, seconds);
  }

  stageStarted(stage: string): void {
    this.stageInFlight.inc({ stage });
  }

  stageEnded(stage: string, outcome: StageOutcome, seconds: number, failure?: FailureClass): void {
    this.stageInFlight.dec({ stage });
    this.stageEvents.inc({ stage, outcome });
    this.stageDuration.observe({ stage, outcome }, seconds);
    if (outcome !== "handled") this.stageFailures.inc({ stage, reason: failure ?? "internal" });
  }

  deadLettered(stage: string, rejected: boolean): void {
    this.stageDeadLettered.inc({ stage, kind: rejected ? "rejected" : "retries_exhausted" });
  }

  watchBacklog(source: BacklogSource): void {
    this.backlogSources.push(source);
  }

  /** The backlog, read now from every source. */
  backlog(): Promise<BacklogRow[]> {
    return readBacklog(this.backlogSources);
  }

  /** Every stage's counts so far, from the same counters /metrics exposes. */
  async stageCounts(): Promise<StageCounts[]> {
    const stages = new Map<string, StageCounts>();
    const of = (stage: string) => {
      let counts = stages.get(stage);
      if (!counts) stages.set(stage, (counts = { stage, handled: 0, failed: 0, retrying: 0, rejected: 0, deadLettered: 0, inFlight: 0 }));
      return counts;
    };
    for (const { labels, value } of (await this.stageEvents.get()).values) of(String(labels.stage))[labels.outcome as StageOutcome] += value;
    for (const { labels, value } of (await this.stageDeadLettered.get()).values) of(String(labels.stage)).deadLettered += value;
    for (const { labels, value } of (await this.stageInFlight.get()).values) of(String(labels.stage)).inFlight += value;
    return [...stages.values()];
  }
}

/** A source that fails (the bus closing, Kafka away) leaves its rows out rather than failing the scrape. */
async function readBacklog(sources: BacklogSource[]): Promise<BacklogRow[]> {
  const read = await Promise.allSettled(sources.map((source) => source()));
  return read.flatMap((r) => (r.status === "fulfilled" ? r.value : []));
}
