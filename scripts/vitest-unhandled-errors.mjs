// A vitest reporter that writes the run's unhandled errors (message and cause's message) as JSON
// to the file QUARRY_VITEST_ERRORS names. vitest's JSON report leaves them out, and
// scripts/run-tests.mjs must tell a worker that died under a test file (nothing the test asserted)
// from an error a test left behind.
import { writeFileSync } from "node:fs";

export default class UnhandledErrors {
  onTestRunEnd(_modules, errors) {
    const file = process.env.QUARRY_VITEST_ERRORS;
    if (!file) return;
    const plain = errors.map((error) => ({ message: String(error?.message ?? error), cause: error?.cause?.message === undefined ? undefined : String(error.cause.message) }));
    writeFileSync(file, JSON.stringify(plain));
  }
}
