// What every service process does around its wiring: listen, start its bus consumers, and on
// SIGTERM/SIGINT stop accepting, finish or release the work in hand within a grace period, and exit.
import type { EventBus, Subscription } from "./bus/event-bus.ts";
import { integer, type Env } from "./config.ts";
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
  /** Starts the service's ingestion consumers, if it has any. */
  startWorkers(): Promise<Subscription[]>;
  /** Releases what the service opened (stores, models, bus). */
  close(): Promise<void>;
}

export interface RunningService {
  url: string;
  port: number;
  /** Stops within graceMs (default: the configured grace): see drainProcess. */
  stop(graceMs?: number): Promise<void>;
}

/** QUARRY_SHUTDOWN_GRACE_MS: how long a stopping process lets calls and ingestion work in hand finish. */
export function shutdownGraceMs(env: Env): number {
  return integer(env, "QUARRY_SHUTDOWN_GRACE_MS", 10_000);
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

export async function runService(service: AssembledService, port: number, host: string, logger: Logger, graceMs: number): Promise<RunningService> {
  const running: RunningServer = await service.server.listen(port, host);
  const workers = await service.startWorkers();
  let stopping: Promise<void> | undefined;
  const stop = (grace = graceMs) =>
    (stopping ??= drainProcess({ servers: [running], workers, closers: [{ name: service.name, close: () => service.close() }], logger: logger.child({ service: service.name }) }, grace));
  return { url: running.url, port: running.port, stop };
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
}
