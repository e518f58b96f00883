// A vitest reporter that writes to the file QUARRY_VITEST_ERRORS names, as JSON, what vitest's JSON
// report leaves out: the run's unhandled errors (message and cause's message), which
// scripts/run-tests.mjs reads to tell a worker that died under a test file (nothing the test
// asserted) from an error a test left behind; and each test file's errors outside its tests (a
// beforeAll hook that threw, a file that did not load), which it repeats under the run's last lines,
// where a CI log cut to its tail still shows them.
import { writeFileSync } from "node:fs";

export default class UnhandledErrors {
  onTestRunEnd(modules, errors) {
    const file = process.env.QUARRY_VITEST_ERRORS;
    if (!file) return;
    const unhandled = errors.map((error) => ({ message: String(error?.message ?? error), cause: error?.cause?.message === undefined ? undefined : String(error.cause.message) }));
    const files = {};
    for (const module of modules) {
      const own = module.errors().map((error) => String(error?.message ?? error));
      if (own.length > 0) files[module.moduleId] = own;
    }
    writeFileSync(file, JSON.stringify({ unhandled, files }));
  }
}
