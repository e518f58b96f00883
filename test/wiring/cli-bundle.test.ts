// The CLI compiled ahead of time (bin/cli-bundle.mjs): built from the sources, stale as soon as one
// of them changes, and what `quarry` runs for a client command.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLE, buildBundle, staleInputs } from "../../bin/cli-bundle.mjs";

const ROOT = join(import.meta.dirname, "..", "..");

describe("the compiled CLI", () => {
  it("is fresh once built, and stale when a source it was built from changes", async () => {
    // A build of its own, one folder below the root as the real one is: the shared bundle is what
    // other test files' `quarry` runs use, and a source touched here would make them rebuild it.
    // "Changed" is the source being newer than the build recorded, so the recorded time is moved
    // back rather than the source forward.
    const outDir = join(ROOT, `.quarry-cli-test-${process.pid}`);
    try {
      await buildBundle(outDir);
      expect(staleInputs(outDir)).toEqual([]);
      const inputsPath = join(outDir, "inputs.json");
      const inputs = JSON.parse(readFileSync(inputsPath, "utf8")) as Record<string, number>;
      expect(Object.keys(inputs)).toContain("cli/commands.ts");
      expect(Object.keys(inputs)).toContain("package-lock.json");
      writeFileSync(inputsPath, JSON.stringify({ ...inputs, "cli/commands.ts": inputs["cli/commands.ts"] - 1000 }));
      expect(staleInputs(outDir)).toEqual(["cli/commands.ts"]);
      writeFileSync(inputsPath, JSON.stringify({ ...inputs, "cli/gone.ts": 0 }));
      expect(staleInputs(outDir)).toEqual(["cli/gone.ts"]);
      rmSync(inputsPath);
      expect(staleInputs(outDir)).toEqual(["(no bundle)"]);
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  });

  it("runs a client command from the bundle, without tsx, and answers --version without loading one", () => {
    // The bundle alone, as bin/quarry.mjs imports it: a client command works without the TypeScript loader.
    const run = spawnSync(process.execPath, [BUNDLE, "kb", "list", "--url", "http://127.0.0.1:9"], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/127\.0\.0\.1:9/);
    const version = spawnSync(process.execPath, [join(ROOT, "bin", "quarry.mjs"), "--version"], { encoding: "utf8" });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
