// What every service process does around its wiring: listen, start its bus consumers, and on
// SIGTERM/SIGINT stop consuming, drain calls in flight, and exit.
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
  /** Starts the service's ingestion consumers, if it has any. */
  startWorkers(): Promise<Subscription[]>;
  /** Releases what the service opened (stores, models, bus). */
  close(): Promise<void>;
}

export interface RunningService {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function runService(service: AssembledService, port: number, host: string, logger: Logger): Promise<RunningService> {
  const running: RunningServer = await service.server.listen(port, host);
  const workers = await service.startWorkers();
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      logger.info({ service: service.name }, "draining");
      for (const w of workers) await w.close();
      await running.close();
      await service.close();
    })());
  return { url: running.url, port: running.port, stop };
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
}
