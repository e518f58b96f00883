// What every service process does around its wiring: listen at once (answering NOT_SERVING on its
// health check), wait for its peers and its start-up calls, start its bus consumers, then report
// SERVING; on SIGTERM/SIGINT stop accepting, finish or release the work in hand within a grace
// period, and exit.
import { sleep } from "./backoff.ts";
import type { BlobStore } from "./blobs/blob-store.ts";
import type { EventBus, Subscription } from "./bus/event-bus.ts";
import { integer, type Env } from "./config.ts";
import type { RedriveSettings } from "./pipeline/redrive.ts";
import type { Logger } from "./logger.ts";
import type { RecentActivity } from "./metrics/recent-activity.ts";
import type { Metrics } from "./metrics/metrics.ts";
import type { BuiltServer, RunningServer } from "./rpc/server.ts";

/** What every service of a process shares: the bus, the blob store, the logger, and how dead letters come back. */
export interface SharedDeps {
  bus: EventBus;
  /** Originals and large uploads (blob-store-from-config.ts): the gateway writes, the parser reads. */
  blobs: BlobStore;
  logger: Logger;
  redrive: RedriveSettings;
  /** The process's metrics (one registry per process; noMetrics when absent). */
  metrics?: Metrics;
  /** The same process's last hour (the status view's stage counts and slow requests), where kept. */
  activity?: RecentActivity;
}

export interface AssembledService {
  name: string;
  server: BuiltServer;
  /**
   * Start-up calls to peers (the chunker asks the embedder for its input limit), made once the
   * peers answer and before any worker starts. Distributed mode retries it while a peer is unavailable.
   */
  prepare?(retry: <T>(what: string, attempt: () => Promise<T>) => Promise<T>): Promise<void>;
  /** Starts the service's ingestion consumers, if it has any. */
  startWorkers(): Promise<Subscription[]>;
  /** Releases what the service opened (stores, models, bus). */
  close(): Promise<void>;
}

export interface RunningService {
  url: string;
  port: number;
  /** Settles once the service reports SERVING; rejects when start-up failed for good. */
  ready: Promise<void>;
  /** Stops within graceMs (default: the configured grace): see drainProcess. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartUpSteps {
  /** Resolves when every peer answers; rejects with the signal's reason when stopped first. */
  waitForPeers(signal: AbortSignal): Promise<void>;
  /** How prepare's calls are retried. */
  retry<T>(what: string, attempt: () => Promise<T>, signal: AbortSignal): Promise<T>;
}

export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** QUARRY_SHUTDOWN_GRACE_MS: how long a stopping process lets calls and ingestion work in hand finish. */
export function shutdownGraceMs(env: Env): number {
  return integer(env, "QUARRY_SHUTDOWN_GRACE_MS", DEFAULT_SHUTDOWN_GRACE_MS);
}

export interface DrainParts {
  servers: RunningServer[];
  workers: Subscription[];
  /** Closed after the workers, in this order (the bus last). */
  closers: { name: string; close(): Promise<void> }[];
  logger: Logger;
}

/**
 * The shutdown of a process, bounded by graceMs: stop accepting connections and end streams at
 * once; let unary calls and the ingestion messages in hand finish until the grace is over; release
 * whatever is still running then (its messages stay uncommitted, so they are delivered again after
 * a restart, as after a crash); then close stores, models and the bus.
 */
export async function drainProcess(parts: DrainParts, graceMs: number): Promise<void> {
  const started = Date.now();
  parts.logger.info({ graceMs }, "draining");
  await Promise.all([
    Promise.all(parts.servers.map((server) => server.close(graceMs))).then(() => parts.logger.info({ ms: Date.now() - started }, "stopped serving")),
    Promise.all(parts.workers.map((worker) => worker.close({ graceMs }))).then(() => parts.logger.info({ ms: Date.now() - started }, "ingestion consumers stopped")),
  ]);
  for (const { name, close } of parts.closers) {
    await close().catch((err: unknown) => parts.logger.warn({ err, component: name }, "closing a component failed during shutdown"));
    parts.logger.info({ component: name, ms: Date.now() - started }, "closed");
  }
  parts.logger.info({ ms: Date.now() - started }, "drained");
}

export async function runService(
  service: AssembledService,
  port: number,
  host: string,
  logger: Logger,
  steps: StartUpSteps,
  graceMs = DEFAULT_SHUTDOWN_GRACE_MS,
): Promise<RunningService> {
  const health = service.server.health;
  health.setAll(false);
  const running: RunningServer = await service.server.listen(port, host);
  const abort = new AbortController();
  let workers: Subscription[] = [];
  const ready = (async () => {
    await steps.waitForPeers(abort.signal);
    await service.prepare?.((what, attempt) => steps.retry(what, attempt, abort.signal));
    const started = await service.startWorkers();
    if (abort.signal.aborted) {
      // Stopped while the consumers were joining: stop() may have moved on, so they are closed here.
      for (const w of started) await w.close({ graceMs: 0 });
      return;
    }
    workers = started;
    health.setAll(true);
    logger.info("ready: reporting SERVING");
  })();
  // Stopping while still waiting is not a start-up failure.
  const settled = ready.catch((error) => {
    if (!abort.signal.aborted) throw error;
  });
  let stopping: Promise<void> | undefined;
  const stop = (grace = graceMs) =>
    (stopping ??= (async () => {
      abort.abort(new Error("stopping"));
      // Waiting for peers ends at once; a consumer still joining its group (up to a session timeout
      // after a crash) is not waited for: closing the bus ends that join.
      await Promise.race([settled.catch(() => {}), sleep(1_000)]);
      const closers = [{ name: service.name, close: () => service.close() }];
      await drainProcess({ servers: [running], workers, closers, logger: logger.child({ service: service.name }) }, grace);
    })());
  return { url: running.url, port: running.port, ready: settled, stop };
}

/**
 * On SIGTERM or SIGINT: stop() (which bounds itself by the grace, plus the model's forward pass in
 * flight), then exit 0. Should it still not be done 15 s past the grace (a component that ignores
 * its deadline), exit 1 anyway: work in hand is uncommitted until finished, so exiting loses
 * nothing. A second signal exits at once.
 */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger, graceMs: number): void {
  const handler = (signal: string) => {
    logger.info({ signal, graceMs }, "shutting down");
    process.once("SIGTERM", () => process.exit(1));
    process.once("SIGINT", () => process.exit(1));
    setTimeout(() => {
      logger.error({ graceMs }, "shutdown overran its grace period; exiting anyway");
      process.exit(1);
    }, graceMs + 15_000).unref();
    stop()
      .then(() => process.exit(0))
      .catch((err) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.once("SIGTERM", handler);
  process.once("SIGINT", handler);
  // Started by `quarry serve all`: when that parent dies without a word (kill -9), go too.
  if (process.channel) {
    process.channel.unref();
    process.once("disconnect", () => handler("parent gone"));
  }
}
