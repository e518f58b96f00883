// The last hour of a process, for the status view: each stage's outcomes and failures by reason in
// one-minute buckets, and the slowest public requests. A small in-memory ring fed by the same calls
// the Prometheus registry records (it wraps that Metrics), because counters since start-up cannot
// say "in the last hour" and the process cannot query Prometheus. Lost on restart, by design:
// Prometheus keeps the history.
import type { AnswerMeasure, FailureClass, Metrics, StageOutcome } from "./metrics.ts";
import type { StageCounts } from "./prometheus-metrics.ts";

const MINUTE_MS = 60_000;
/** How far back the status view looks. */
export const ACTIVITY_WINDOW_MS = 60 * MINUTE_MS;
/** Slow requests kept: enough for a page, few enough to sort on every call. */
const SLOW_REQUESTS_KEPT = 20;

/** One stage over the window: the registry's counts (inFlight: now), and its failures by class. */
export interface StageActivity extends StageCounts {
  /** Failed, retrying and rejected events by failure class. */
  failures: Map<FailureClass, number>;
}

export interface SlowRequest {
  method: string;
  seconds: number;
  code: string;
  traceId: string;
  at: Date;
}

interface Bucket {
  minute: number;
  stages: Map<string, StageActivity>;
}

export interface RecentActivityOptions {
  /** Which RPCs count as requests (the public service's); others are not listed. */
  requestsOf: (service: string, method: string) => boolean;
  now?: () => number;
}

export class RecentActivity implements Metrics {
  private readonly buckets: Bucket[] = [];
  private readonly inFlight = new Map<string, number>();
  private slow: SlowRequest[] = [];
  private readonly now: () => number;

  constructor(private readonly inner: Metrics, private readonly options: RecentActivityOptions) {
    this.now = options.now ?? Date.now;
  }

  rpc(service: string, method: string, code: string, seconds: number, traceId?: string): void {
    this.inner.rpc(service, method, code, seconds, traceId);
    if (!this.options.requestsOf(service, method)) return;
    const at = this.now();
    const fresh = this.slow.filter((r) => r.at.getTime() > at - ACTIVITY_WINDOW_MS);
    if (fresh.length >= SLOW_REQUESTS_KEPT && fresh[fresh.length - 1].seconds >= seconds) {
      this.slow = fresh;
      return;
    }
    fresh.push({ method, seconds, code, traceId: traceId ?? "", at: new Date(at) });
    this.slow = fresh.sort((a, b) => b.seconds - a.seconds).slice(0, SLOW_REQUESTS_KEPT);
  }

  stageStarted(stage: string): void {
    this.inner.stageStarted(stage);
    this.inFlight.set(stage, (this.inFlight.get(stage) ?? 0) + 1);
  }

  stageEnded(stage: string, outcome: StageOutcome, seconds: number, failure?: FailureClass): void {
    this.inner.stageEnded(stage, outcome, seconds, failure);
    this.inFlight.set(stage, Math.max(0, (this.inFlight.get(stage) ?? 0) - 1));
    const counts = this.current(stage);
    counts[outcome]++;
    if (outcome !== "handled") {
      const reason = failure ?? "internal";
      counts.failures.set(reason, (counts.failures.get(reason) ?? 0) + 1);
    }
  }

  embedBatch(model: string, texts: number, seconds: number): void {
    this.inner.embedBatch(model, texts, seconds);
  }

  embedQueueWait(model: string, seconds: number): void {
    this.inner.embedQueueWait(model, seconds);
  }

  search(mode: string, backend: string, seconds: number): void {
    this.inner.search(mode, backend, seconds);
  }

  searchCancelled(backend: string): void {
    this.inner.searchCancelled(backend);
  }

  answer(answer: AnswerMeasure): void {
    this.inner.answer(answer);
  }

  deadLettered(stage: string, rejected: boolean): void {
    this.inner.deadLettered(stage, rejected);
    this.current(stage).deadLettered++;
  }

  watchBacklog(source: Parameters<Metrics["watchBacklog"]>[0]): void {
    this.inner.watchBacklog(source);
  }

  exposition(): ReturnType<Metrics["exposition"]> {
    return this.inner.exposition();
  }

  /** Every stage seen in the window (or in flight now), summed over its minutes. */
  stages(): StageActivity[] {
    const totals = new Map<string, StageActivity>();
    const since = this.minute() - ACTIVITY_WINDOW_MS / MINUTE_MS;
    for (const bucket of this.buckets) {
      if (bucket.minute <= since) continue;
      for (const counts of bucket.stages.values()) {
        const total = totals.get(counts.stage) ?? emptyStage(counts.stage);
        total.handled += counts.handled;
        total.failed += counts.failed;
        total.retrying += counts.retrying;
        total.rejected += counts.rejected;
        total.deadLettered += counts.deadLettered;
        for (const [reason, n] of counts.failures) total.failures.set(reason, (total.failures.get(reason) ?? 0) + n);
        totals.set(counts.stage, total);
      }
    }
    for (const [stage, n] of this.inFlight) {
      if (n === 0 && !totals.has(stage)) continue;
      const total = totals.get(stage) ?? emptyStage(stage);
      total.inFlight = n;
      totals.set(stage, total);
    }
    return [...totals.values()];
  }

  /** The slowest public requests of the window, slowest first. */
  slowestRequests(): SlowRequest[] {
    const since = this.now() - ACTIVITY_WINDOW_MS;
    return this.slow.filter((r) => r.at.getTime() > since);
  }

  private minute(): number {
    return Math.floor(this.now() / MINUTE_MS);
  }

  private current(stage: string): StageActivity {
    const minute = this.minute();
    let bucket = this.buckets.at(-1);
    if (!bucket || bucket.minute !== minute) {
      bucket = { minute, stages: new Map() };
      this.buckets.push(bucket);
      // The ring: minutes older than the window go.
      while (this.buckets.length > 0 && this.buckets[0].minute <= minute - ACTIVITY_WINDOW_MS / MINUTE_MS) this.buckets.shift();
    }
    let counts = bucket.stages.get(stage);
    if (!counts) bucket.stages.set(stage, (counts = emptyStage(stage)));
    return counts;
  }
}

function emptyStage(stage: string): StageActivity {
  return { stage, handled: 0, failed: 0, retrying: 0, rejected: 0, deadLettered: 0, failures: new Map(), inFlight: 0 };
}
