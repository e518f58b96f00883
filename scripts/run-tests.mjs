#!/usr/bin/env node
// Runs the vitest suite and ends with one plain line, "Tests: N passed, N failed, N skipped", that
// any CI can read, exiting with vitest's own code.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "quarry-vitest-"));
const results = join(dir, "results.json");
const run = spawnSync("npx", ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${results}`, ...process.argv.slice(2)], {
  stdio: "inherit",
});
let code = run.status ?? 1;
if (existsSync(results)) {
  const r = JSON.parse(readFileSync(results, "utf8"));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  process.stdout.write(`\nTests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped\n`);
  if (r.numTotalTests === 0) code = code || 1;
} else {
  process.stdout.write("\nTests: 0 passed, 1 failed\n");
  code = code || 1;
}
rmSync(dir, { recursive: true, force: true });
process.exit(code);
