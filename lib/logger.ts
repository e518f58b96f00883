// One structured logger per process. Never log document text, prompts, request bodies or secrets.
// JSON lines for machines (a pipe, a file, a log collector); in a terminal, one readable line per
// entry through pino-pretty — unless QUARRY_LOG_FORMAT says otherwise.
import { createRequire } from "node:module";
import { pino, type DestinationStream, type Logger } from "pino";
import type PinoPretty from "pino-pretty";
import { activeSpanIds } from "./tracing/spans.ts";

// Required when a terminal asks for it, not imported: every `quarry` command loads this module,
// and only the server's own output in a terminal needs the prettifier.
const require = createRequire(import.meta.url);

export type { Logger };

export type LogFormat = "json" | "pretty";

/** QUARRY_LOG_FORMAT=json|pretty when set; else pretty in a terminal and JSON anywhere else. */
export function logFormat(env: NodeJS.ProcessEnv, isTerminal: boolean): LogFormat {
  const asked = env.QUARRY_LOG_FORMAT?.trim().toLowerCase();
  if (asked === "json" || asked === "pretty") return asked;
  return isTerminal ? "pretty" : "json";
}

/** Readable lines: time, level, the process and service, the message, then the other fields. */
export function prettyStream(destination: NodeJS.WritableStream = process.stdout, colorize = true): DestinationStream {
  const pretty = require("pino-pretty") as typeof PinoPretty;
  return pretty({
    destination,
    colorize,
    sync: true,
    translateTime: "SYS:HH:MM:ss",
    ignore: "pid,hostname,name,service",
    messageFormat: (log, messageKey) => `${log.service ?? log.name ?? ""}: ${String(log[messageKey] ?? "")}`,
  });
}

/**
 * The root logger of a process: `name` says which process wrote a line ("quarry" embedded, or the
 * service `quarry serve <service>` runs). Each service adds its own `service` binding as a child,
 * so the root does not bind `service` itself: pino appends a child's bindings rather than replacing
 * the parent's, and a second `service` key would make every line invalid to strict JSON readers.
 * Without a destination it writes to stdout in the format logFormat picks.
 */
export function createLogger(name: string, level = process.env.QUARRY_LOG_LEVEL ?? "info", destination?: DestinationStream): Logger {
  // A line written inside a span names it (trace_id, span_id), so a log search finds the trace.
  const options = { name, level, mixin: () => activeSpanIds() ?? {} };
  if (destination) return pino(options, destination);
  return logFormat(process.env, Boolean(process.stdout.isTTY)) === "pretty" ? pino(options, prettyStream()) : pino(options);
}

/** For tests and library defaults: discards everything. */
export const silentLogger: Logger = pino({ level: "silent" });
