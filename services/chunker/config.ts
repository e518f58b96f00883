import { DEFAULT_MODEL } from "../../lib/models/model-catalog.ts";
import { integer, modelsDir, optional, servicePort, type Env } from "../../lib/config.ts";
import { DEFAULT_MAX_DOCUMENT_CHUNKS } from "./chunk-document.ts";

export interface ChunkerConfig {
  port: number;
  /** The folder with tokenizer.json used to measure chunks in the embedding model's tokens. */
  tokenizerDir: string;
  /** Most chunks one document may become. */
  maxDocumentChunks: number;
}

/**
 * The local model whose tokenizer measures chunks: the configured one, or for an OpenAI-compatible
 * endpoint (whose tokenizer Quarry does not have) the default model's, an approximation that
 * QUARRY_TOKENIZER_DIR replaces.
 */
function localModel(env: Env): string {
  const model = optional(env, "QUARRY_EMBEDDING_MODEL");
  return optional(env, "QUARRY_EMBEDDING_PROVIDER") === "openai" || !model ? DEFAULT_MODEL : model;
}

export function chunkerConfig(env: Env): ChunkerConfig {
  return {
    port: servicePort(env, "chunker"),
    maxDocumentChunks: integer(env, "QUARRY_MAX_DOCUMENT_CHUNKS", DEFAULT_MAX_DOCUMENT_CHUNKS),
    tokenizerDir: optional(env, "QUARRY_TOKENIZER_DIR") ?? `${modelsDir(env)}/${localModel(env)}`,
  };
}
