// The CLI compiled ahead of time (bin/cli-bundle.mjs): built from the sources, stale as soon as one
// of them changes, and what `quarry` runs for a client command.
import { spawnSync } from "node:child_process";
import { statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLE, buildBundle, bundleIsFresh } from "../../bin/cli-bundle.mjs";

const ROOT = join(import.meta.dirname, "..", "..");

describe("the compiled CLI", () => {
  it("is fresh once built, and stale when a source it was built from changes", async () => {
    await buildBundle();
    expect(bundleIsFresh()).toBe(true);
    const source = join(ROOT, "cli", "commands.ts");
    const { atime, mtime } = statSync(source);
    try {
      utimesSync(source, atime, new Date(mtime.getTime() + 1000));
      expect(bundleIsFresh()).toBe(false);
    } finally {
      utimesSync(source, atime, mtime);
    }
    expect(bundleIsFresh()).toBe(true);
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
