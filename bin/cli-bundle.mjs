// The CLI compiled ahead of time: one ES module bundle of cli/main.ts and everything it imports
// from the repository (npm packages stay imports), built with esbuild by `npm install` (prepare),
// `npm start` and `npm test`, and again whenever a source it was built from has changed. Loading
// it skips tsx's compile-on-import, which made every command take seconds. Plain JavaScript,
// because it runs before anything can compile TypeScript.
//
// The bundle sits one folder below the repository root, as cli/ does, so that the paths modules
// resolve from their own place (a build elsewhere, as a test makes, is also one folder below) ("../package.json", "../console/dist") still point at the same files.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUT_DIR = join(ROOT, ".quarry-cli");
const OUT_NAME = "quarry";
export const BUNDLE = join(OUT_DIR, `${OUT_NAME}.mjs`);
const inputsFile = (outDir) => join(outDir, "inputs.json");

/** Whether the bundle exists and no file it was built from has changed (is newer) since. */
export function bundleIsFresh(outDir = OUT_DIR) {
  return staleInputs(outDir).length === 0;
}

/**
 * The sources changed, deleted or renamed since the bundle was built, by path from the repository
 * root; ["(no bundle)"] when there is none. Named, so that a stale bundle can say why.
 */
export function staleInputs(outDir = OUT_DIR) {
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(inputsFile(outDir), "utf8"));
  } catch {
    return ["(no bundle)"];
  }
  return Object.entries(inputs)
    .filter(([path, mtimeMs]) => {
      try {
        return statSync(join(ROOT, path)).mtimeMs > mtimeMs;
      } catch {
        return true; // deleted or renamed
      }
    })
    .map(([path]) => path);
}

/**
 * Builds the bundle. Code split at dynamic imports: what a command loads lazily (the servers behind
 * `serve`, a command's heavy parts) is a chunk of its own, and its packages load only with it.
 * Concurrent builds (parallel test workers) each build into a folder of their own, then move the
 * chunks (content-named, so identical builds agree) and last the entry into place.
 */
export async function buildBundle(outDir = OUT_DIR) {
  const esbuild = await import("esbuild");
  const staging = join(outDir, `.build-${process.pid}`);
  mkdirSync(staging, { recursive: true });
  const result = await esbuild.build({
    entryPoints: { [OUT_NAME]: join(ROOT, "cli", "main.ts") },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outdir: staging,
    chunkNames: "chunk-[hash]",
    outExtension: { ".js": ".mjs" },
    metafile: true,
    logLevel: "silent",
  });
  const inputs = {};
  for (const path of [...Object.keys(result.metafile.inputs), relative(process.cwd(), join(ROOT, "package-lock.json"))]) {
    const fromRoot = relative(ROOT, resolve(process.cwd(), path));
    inputs[fromRoot] = statSync(join(ROOT, fromRoot)).mtimeMs;
  }
  for (const name of readdirSync(staging).filter((n) => n.startsWith("chunk-"))) renameSync(join(staging, name), join(outDir, name));
  writeFileSync(join(staging, "inputs.json"), JSON.stringify(inputs));
  renameSync(join(staging, `${OUT_NAME}.mjs`), join(outDir, `${OUT_NAME}.mjs`));
  renameSync(join(staging, "inputs.json"), inputsFile(outDir));
  rmSync(staging, { recursive: true, force: true });
}
