#!/usr/bin/env node
// Runs the vitest suite and ends with one plain line, "Tests: N passed, N failed, N skipped", that
// any CI can read, exiting non-zero when vitest did. A test file that fails outside any test (it does
// not load, or a beforeAll/afterAll hook throws) has no failed test of its own in vitest's counts, so
// each such file is named above that line and counted as one failure in it: the line never says
// "0 failed" for a run that failed.
//
// The whole suite runs in two vitest runs: everything but the files below, then those alone. They
// start engine clusters of their own (six JVMs) and measure how long a loss takes to ride out;
// beside the rest of the suite on a two-core machine they took twice as long and their timings said
// more about the neighbours than about Quarry. Arguments (a file, a filter) run one vitest run as given.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const ALONE = ["test/distributed/cluster-faults.test.ts"];

const dir = mkdtempSync(join(tmpdir(), "quarry-vitest-"));
const args = process.argv.slice(2);
const runs = args.length > 0 ? [args] : [ALONE.flatMap((file) => ["--exclude", file]), ALONE];

let code = 0;
const total = { passed: 0, failed: 0, skipped: 0, tests: 0 };
for (const [i, runArgs] of runs.entries()) {
  const results = join(dir, `results-${i}.json`);
  const run = spawnSync("npx", ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${results}`, ...runArgs], { stdio: "inherit" });
  code = code || (run.status ?? 1);
  if (!existsSync(results)) {
    process.stdout.write(`\nvitest run ${runArgs.join(" ")} left no results\n`);
    total.failed++;
    code = code || 1;
    continue;
  }
  const r = JSON.parse(readFileSync(results, "utf8"));
  const broken = (r.testResults ?? []).filter((file) => file.status === "failed" && !file.assertionResults.some((t) => t.status === "failed"));
  if (broken.length > 0) {
    process.stdout.write(`\n${broken.length} test file(s) failed outside any test:\n`);
    for (const file of broken) {
      const reason = file.message?.trim().split("\n")[0] || "a beforeAll/afterAll hook failed (its error is printed above)";
      process.stdout.write(`  FAILED ${relative(process.cwd(), file.name)}: ${reason}\n`);
    }
    code = code || 1;
  }
  total.passed += r.numPassedTests;
  total.failed += r.numFailedTests + broken.length;
  total.skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  total.tests += r.numTotalTests;
}
process.stdout.write(`\nTests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`);
if (total.tests === 0) code = code || 1;
rmSync(dir, { recursive: true, force: true });
process.exit(code);
