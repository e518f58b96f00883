#!/usr/bin/env node
// `quarry`: the client commands run from the CLI compiled ahead of time (cli-bundle.mjs), built
// here first when it is missing or stale. `serve`, `eval` and `bench` run the TypeScript through
// tsx as before: they start worker threads from files beside their modules, which a bundle moves.
// `--version` alone needs no command line at all: it answers before loading one.
import { readFileSync } from "node:fs";

const SOURCE_ONLY = new Set(["serve", "eval", "eval-answers", "bench"]);
const args = process.argv.slice(2);
const command = args.find((arg) => !arg.startsWith("-"));

if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`);
} else if (command && SOURCE_ONLY.has(command)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../cli/main.ts");
} else {
  const { BUNDLE, buildBundle, bundleIsFresh } = await import("./cli-bundle.mjs");
  if (!bundleIsFresh()) await buildBundle();
  await import(BUNDLE);
}
