// One structured logger per service. Never log document text, prompts, request bodies or secrets.
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(service: string, level = process.env.QUARRY_LOG_LEVEL ?? "info"): Logger {
  return pino({ name: service, level, base: { service } });
}

/** For tests and library defaults: discards everything. */
export const silentLogger: Logger = pino({ level: "silent" });
