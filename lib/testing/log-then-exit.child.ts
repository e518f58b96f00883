// A process that logs through Quarry's own logger and exits, as `quarry serve` does at the end of a
// shutdown: three lines back to back (the first one's write still in flight), then process.exit.
// logger.test.ts runs it with nobody reading its stdout.
import { createLogger } from "../logger.ts";

const logger = createLogger("quarry", "info");
setTimeout(() => {
  logger.info("draining");
  logger.info("stopped");
  logger.info("bye");
  process.exit(0);
}, 200);
