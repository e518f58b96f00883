// What every service process does around its wiring: listen at once (answering NOT_SERVING on its
// health check), wait for its peers and its start-up calls, start its bus consumers, then report
// SERVING; on SIGTERM/SIGINT stop consuming, drain calls in flight, and exit.
import { sleep } from "./backoff.ts";
import type { EventBus, Subscription } from "./bus/event-bus.ts";
import type { RedriveSettings } from "./pipeline/redrive.ts";
import type { Logger } from "./logger.ts";
import type { BuiltServer, RunningServer } from "./rpc/server.ts";

/** What every service of a process shares: the bus, the logger, and how dead letters come back. */
export interface SharedDeps {
  bus: EventBus;
  logger: Logger;
  redrive: RedriveSettings;
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
  stop(): Promise<void>;
}

export interface StartUpSteps {
  /** Resolves when every peer answers; rejects with the signal's reason when stopped first. */
  waitForPeers(signal: AbortSignal): Promise<void>;
  /** How prepare's calls are retried. */
  retry<T>(what: string, attempt: () => Promise<T>, signal: AbortSignal): Promise<T>;
}

export async function runService(service: AssembledService, port: number, host: string, logger: Logger, steps: StartUpSteps): Promise<RunningService> {
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
      for (const w of started) await w.close();
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
  const stop = () =>
    (stopping ??= (async () => {
      logger.info({ service: service.name }, "draining");
      abort.abort(new Error("stopping"));
      // Waiting for peers ends at once; a consumer still joining its group (up to a session timeout
      // after a crash) is not waited for: closing the bus ends that join.
      await Promise.race([settled.catch(() => {}), sleep(1_000)]);
      for (const w of workers) await w.close();
      await running.close();
      await service.close();
    })());
  return { url: running.url, port: running.port, ready: settled, stop };
}

export function stopOnSignals(stop: () => Promise<void>, logger: Logger): void {
  const handler = (signal: string) => {
    logger.info({ signal }, "shutting down");
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
