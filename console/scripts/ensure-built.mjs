#!/usr/bin/env node
// Builds the console (console/dist) when it is missing or older than its sources, so that a fresh
// clone's `npm start` and `npm test` serve it without a separate step. A few seconds when it builds,
// a few milliseconds when it does not.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const consoleDir = fileURLToPath(new URL("..", import.meta.url));
const repoRoot = join(consoleDir, "..");
const built = join(consoleDir, "dist", "index.html");
const sources = [join(consoleDir, "src"), join(consoleDir, "index.html"), join(consoleDir, "vite.config.ts"), join(repoRoot, "gen", "quarry"), join(repoRoot, "lib", "models", "model-catalog.ts"), join(repoRoot, "package-lock.json")];

function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const stale = !existsSync(built) || Math.max(...sources.filter(existsSync).map(newest)) > statSync(built).mtimeMs;
if (stale) {
  process.stderr.write("building the console (console/dist)…\n");
  const run = spawnSync("npx", ["vite", "build", "--config", join(consoleDir, "vite.config.ts")], { cwd: repoRoot, stdio: "inherit" });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
