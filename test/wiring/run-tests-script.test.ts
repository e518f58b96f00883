// scripts/run-tests.mjs's handling of a vitest worker that dies under a test file: the file is
// named and run once more alone, the run passing only if it passes then; with a test that fails
// beside it nothing is re-run. Each case runs the script on a folder of its own with its own vitest
// config (inside the repository, so the files resolve vitest from its node_modules, but outside
// the suite's include patterns).
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../..");
const root = join(repo, "test-output", `run-tests-${process.pid}`);

afterAll(() => rmSync(root, { recursive: true, force: true }));

function caseFolder(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "vitest.config.mjs"), `export default { test: { include: ["*.test.mjs"], pool: "forks" } };\n`);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

function runTests(dir: string) {
  const run = spawnSync("node", [join(repo, "scripts/run-tests.mjs"), "--root", dir], { cwd: repo, encoding: "utf8", timeout: 120_000 });
  const out = (run.stdout + run.stderr).replace(/\x1b\[[0-9;]*m/g, "");
  return { status: run.status, out, summary: out.match(/^Tests: .*$/m)?.[0] };
}

// Kills its own fork the first time it runs (a marker file remembers), passes after.
const diesOnce = (marker: string) => `import { test, expect } from "vitest";
import { existsSync, writeFileSync } from "node:fs";
test("survives a second run", () => {
  if (!existsSync(${JSON.stringify(marker)})) { writeFileSync(${JSON.stringify(marker)}, ""); process.kill(process.pid, "SIGKILL"); }
  expect(1).toBe(1);
});
`;
const dies = `import { test } from "vitest";\ntest("dies", () => { process.kill(process.pid, "SIGKILL"); });\n`;
const passes = `import { test, expect } from "vitest";\ntest("passes", () => { expect(1).toBe(1); });\ntest.skip("skipped", () => {});\n`;
const fails = `import { test, expect } from "vitest";\ntest("fails", () => { expect(1).toBe(2); });\n`;

describe("scripts/run-tests.mjs when a vitest worker exits", () => {
  it("re-runs the unfinished file once and passes when it passes then", () => {
    const dir = caseFolder("once", {});
    writeFileSync(join(dir, "a.test.mjs"), diesOnce(join(dir, "died")));
    writeFileSync(join(dir, "b.test.mjs"), passes);
    const run = runTests(dir);
    expect(run.out).toMatch(/UNFINISHED .*a\.test\.mjs/);
    expect(run.out).toMatch(/re-run of .*a\.test\.mjs: passed/);
    expect(run.summary).toBe("Tests: 2 passed, 0 failed, 1 skipped");
    expect(run.status).toBe(0);
  }, 150_000);

  it("fails when the file dies again", () => {
    const dir = caseFolder("always", { "a.test.mjs": dies, "b.test.mjs": passes });
    const run = runTests(dir);
    expect(run.out).toMatch(/re-run of .*a\.test\.mjs: FAILED/);
    expect(run.summary).toBe("Tests: 1 passed, 1 failed, 1 skipped");
    expect(run.status).not.toBe(0);
  }, 150_000);

  it("re-runs nothing when a test failed beside it", () => {
    const dir = caseFolder("failing", { "c.test.mjs": fails });
    writeFileSync(join(dir, "a.test.mjs"), diesOnce(join(dir, "died")));
    const run = runTests(dir);
    expect(run.out).toMatch(/UNFINISHED .*a\.test\.mjs/);
    expect(run.out).toContain("not re-run");
    expect(run.summary).toBe("Tests: 0 passed, 2 failed, 0 skipped");
    expect(run.status).not.toBe(0);
  }, 150_000);
});

describe("scripts/run-tests.mjs when a file fails outside its tests", () => {
  it("names the file and repeats its hook's error under the last lines", () => {
    const hookThrows = `import { beforeAll, test } from "vitest";\nbeforeAll(() => { throw new Error("engines.sh up failed:\\nkafka-storage: error: argument --cluster-id/-t: expected one argument"); });\ntest("never runs", () => {});\n`;
    const dir = caseFolder("hook", { "h.test.mjs": hookThrows, "b.test.mjs": passes });
    const run = runTests(dir);
    const tail = run.out.slice(run.out.lastIndexOf("failed outside any test"));
    expect(tail).toMatch(/FAILED .*h\.test\.mjs/);
    expect(tail).toContain("    engines.sh up failed:\n    kafka-storage: error: argument --cluster-id/-t: expected one argument\n");
    expect(run.summary).toBe("Tests: 1 passed, 1 failed, 2 skipped");
    expect(run.status).not.toBe(0);
  }, 150_000);
});
