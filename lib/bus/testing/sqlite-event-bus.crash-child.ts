// A consumer process for the crash test in sqlite-event-bus.test.ts: it handles messages until it
// reaches the one named on the command line, then hangs in the handler until the test kills it.
// Run as: node --import tsx sqlite-event-bus.crash-child.ts <db> <topic> <group> <hang-on-value>
import { SqliteEventBus } from "../sqlite-event-bus.ts";

const [file, topic, group, hangOn] = process.argv.slice(2);
const bus = new SqliteEventBus(file, { leaseMs: 600 });
await bus.subscribe({
  group,
  topics: [topic],
  handler: async (message) => {
    const value = new TextDecoder().decode(message.value);
    if (value === hangOn) {
      process.stdout.write(`hanging ${value}\n`);
      await new Promise(() => {});
    }
    process.stdout.write(`handled ${value}\n`);
  },
});
process.stdout.write("ready\n");
