// The Metrics of one process in a prom-client registry: what /metrics exposes and what the status
// RPC reads. The one module that imports prom-client (`npm run check` holds that line).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { optional, ConfigError, type Env } from "../config.ts";
import { noMetrics, type AnswerMeasure, type BacklogRow, type BacklogSource, type Exposition, type FailureClass, type Metrics, type StageOutcome } from "./metrics.ts";

/** Request latencies: 5 ms to a minute (a chat turn with a slow model). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** A stage's event: a tiny text parses in milliseconds, a large PDF embeds for minutes. */
const STAGE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Texts per embedding-model call: one question up to the coalescer's 256. */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];
/** Waits and first tokens: a millisecond (an idle model) to half a minute (behind a large document). */
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

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
  private readonly embedBatchSize: Histogram<"model">;
  private readonly embedBatchDuration: Histogram<"model">;
  private readonly embedTexts: Counter<"model">;
  private readonly embedQueue: Histogram<"model">;
  private readonly searchDuration: Histogram<"mode" | "backend">;
  private readonly searchesCancelled: Counter<"backend">;
  private readonly answerFirstToken: Histogram;
  private readonly answerDuration: Histogram;
  private readonly answers: Counter<"outcome">;
  private readonly answerCitations: Counter<"verdict">;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    // The event-loop lag histogram samples every 50 ms, not prom-client's 10: each sample is a
    // timer wake-up of the main thread, and at 100 a second they were most of what metrics cost
    // an idle or ingesting process (docs/benchmarks/observability.md). A stall longer than 50 ms
    // still delays a sample by about its length; a shorter one shows when it straddles a sample.
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 50 });
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
    this.embedBatchSize = new Histogram({
      name: "quarry_embedder_batch_size",
      help: "Texts per call to an embedding model (documents' chunks joined into one forward pass, or one question).",
      labelNames: ["model"],
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.embedBatchDuration = new Histogram({
      name: "quarry_embedder_batch_duration_seconds",
      help: "How long one call to an embedding model took.",
      labelNames: ["model"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.embedTexts = new Counter({
      name: "quarry_embedder_texts_total",
      help: "Texts an embedding model turned into vectors; rate() is texts per second.",
      labelNames: ["model"],
      registers,
    });
    this.embedQueue = new Histogram({
      name: "quarry_embedder_queue_wait_seconds",
      help: "How long an embed call waited behind other calls' forward passes before the model took its first texts.",
      labelNames: ["model"],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.searchDuration = new Histogram({
      name: "quarry_search_duration_seconds",
      help: "Searches the index ran, by retrieval mode (bm25, vector, hybrid) and backend (sqlite, opensearch, elasticsearch).",
      labelNames: ["mode", "backend"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.searchesCancelled = new Counter({
      name: "quarry_index_searches_cancelled_total",
      help: "Searches the index dropped before running them because their caller went away (a cancelled request, a passed deadline), by backend.",
      labelNames: ["backend"],
      registers,
    });
    this.answerFirstToken = new Histogram({
      name: "quarry_answer_first_token_seconds",
      help: "From a chat question to the first text of its answer.",
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.answerDuration = new Histogram({
      name: "quarry_answer_duration_seconds",
      help: "From a chat question to its final event (retrieval, generation and citation checks).",
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.answers = new Counter({
      name: "quarry_answers_total",
      help: "Chat questions answered, by outcome: answered, or abstained (the evidence did not support an answer).",
      labelNames: ["outcome"],
      registers,
    });
    this.answerCitations = new Counter({
      name: "quarry_answer_citations_total",
      help: "Citation markers left in answers, by verdict: supported or unsupported by the chunk they cite.",
      labelNames: ["verdict"],
      registers,
    });
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

  embedBatch(model: string, texts: number, seconds: number): void {
    this.embedBatchSize.observe({ model }, texts);
    this.embedBatchDuration.observe({ model }, seconds);
    this.embedTexts.inc({ model }, texts);
  }

  embedQueueWait(model: string, seconds: number): void {
    this.embedQueue.observe({ model }, seconds);
  }

  search(mode: string, backend: string, seconds: number): void {
    this.searchDuration.observe({ mode, backend }, seconds);
  }

  searchCancelled(backend: string): void {
    this.searchesCancelled.inc({ backend });
  }

  answer(answer: AnswerMeasure): void {
    if (answer.firstTokenSeconds !== undefined) this.answerFirstToken.observe(answer.firstTokenSeconds);
    this.answerDuration.observe(answer.seconds);
    this.answers.inc({ outcome: answer.abstained ? "abstained" : "answered" });
    this.answerCitations.inc({ verdict: "supported" }, answer.citations - answer.unsupportedCitations);
    this.answerCitations.inc({ verdict: "unsupported" }, answer.unsupportedCitations);
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

/**
 * The process's metrics: a Prometheus registry, or — with QUARRY_METRICS=off — nothing recorded and
 * no /metrics (for `quarry bench observability`'s comparison, or a deployment that wants none).
 */
export function processMetrics(env: Env): Metrics {
  const setting = (optional(env, "QUARRY_METRICS") ?? "on").toLowerCase();
  if (setting === "off") return noMetrics;
  if (setting !== "on") throw new ConfigError(`QUARRY_METRICS must be "on" or "off", not "${setting}"`);
  return new PrometheusMetrics();
}
