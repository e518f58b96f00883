// What a server process does about errors nobody caught. Untrusted input never gets here: it is
// parsed on worker threads (services/parser/isolated-parser.ts), where a library's stray rejection
// stays in its thread. What remains is a bug in Quarry or a library on the main thread:
// - An unhandled promise rejection is logged at error level with its stack and the process goes on
//   serving. The rejected work has already failed on its own (its caller got no result, its bus
//   message is redelivered); ending the process would turn one bug into an outage for every user
//   and every knowledge base. Logged loudly, counted, never swallowed silently.
// - An uncaught exception ends the process (exit code 1) after it is logged, as Node does by
//   default: it unwound a synchronous call half way, so in-memory state may be inconsistent, and
//   ingestion resumes from the committed bus positions after a restart.
import type { Logger } from "./logger.ts";

let installed: { unhandledRejections: number } | undefined;

export function installProcessGuards(logger: Logger): { unhandledRejections: number } {
  if (installed) return installed;
  const counts = { unhandledRejections: 0 };
  process.on("unhandledRejection", (reason) => {
    counts.unhandledRejections++;
    logger.error(
      { err: reason, unhandledRejections: counts.unhandledRejections },
      "unhandled promise rejection (a bug: please report it); the process keeps serving",
    );
  });
  process.on("uncaughtException", (error) => {
    logger.fatal({ err: error }, "uncaught exception; exiting");
    process.exit(1);
  });
  installed = counts;
  return counts;
}
