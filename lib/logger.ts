// One structured logger per process. Never log document text, prompts, request bodies or secrets.
import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger };

/**
 * The root logger of a process: `name` says which process wrote a line ("quarry" embedded, or the
 * service `quarry serve <service>` runs). Each service adds its own `service` binding as a child,
 * so the root does not bind `service` itself: pino appends a child's bindings rather than replacing
 * the parent's, and a second `service` key would make every line invalid to strict JSON readers.
 */
export function createLogger(name: string, level = process.env.QUARRY_LOG_LEVEL ?? "info", destination?: DestinationStream): Logger {
  return destination ? pino({ name, level }, destination) : pino({ name, level });
}

/** For tests and library defaults: discards everything. */
export const silentLogger: Logger = pino({ level: "silent" });
