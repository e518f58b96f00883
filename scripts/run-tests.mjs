#!/usr/bin/env node
// Runs the vitest suite and ends with one plain line, "Tests: N passed, N failed, N skipped", that
// any CI can read, exiting with vitest's own code. A test file that fails outside any test (it does
// not load, or a beforeAll/afterAll hook throws) has no failed test of its own in vitest's counts, so
// each such file is named above that line and counted as one failure in it: the line never says
// "0 failed" for a run that failed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "quarry-vitest-"));
const results = join(dir, "results.json");
const run = spawnSync("npx", ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${results}`, ...process.argv.slice(2)], {
  stdio: "inherit",
});
let code = run.status ?? 1;
if (existsSync(results)) {
  const r = JSON.parse(readFileSync(results, "utf8"));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  const broken = (r.testResults ?? []).filter((file) => file.status === "failed" && !file.assertionResults.some((t) => t.status === "failed"));
  if (broken.length > 0) {
    process.stdout.write(`\n${broken.length} test file(s) failed outside any test:\n`);
    for (const file of broken) {
      const reason = file.message?.trim().split("\n")[0] || "a beforeAll/afterAll hook failed (its error is printed above)";
      process.stdout.write(`  FAILED ${relative(process.cwd(), file.name)}: ${reason}\n`);
    }
    code = code || 1;
  }
  process.stdout.write(`\nTests: ${r.numPassedTests} passed, ${r.numFailedTests + broken.length} failed, ${skipped} skipped\n`);
  if (r.numTotalTests === 0) code = code || 1;
} else {
  process.stdout.write("\nTests: 0 passed, 1 failed\n");
  code = code || 1;
}
rmSync(dir, { recursive: true, force: true });
process.exit(code);
