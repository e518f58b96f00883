import { integer, modelsDir, optional, ServicePorts, type Env } from "../../lib/config.ts";
import { DEFAULT_MAX_DOCUMENT_CHUNKS } from "./chunk-document.ts";

export interface ChunkerConfig {
  port: number;
  /** The folder with tokenizer.json used to measure chunks in the embedding model's tokens. */
  tokenizerDir: string;
  /** Most chunks one document may become. */
  maxDocumentChunks: number;
}

export function chunkerConfig(env: Env): ChunkerConfig {
  return {
    port: integer(env, "QUARRY_CHUNKER_PORT", ServicePorts.chunker),
    maxDocumentChunks: integer(env, "QUARRY_MAX_DOCUMENT_CHUNKS", DEFAULT_MAX_DOCUMENT_CHUNKS),
    tokenizerDir: optional(env, "QUARRY_TOKENIZER_DIR") ?? `${modelsDir(env)}/${optional(env, "QUARRY_EMBEDDING_MODEL") ?? "all-MiniLM-L6-v2-int8"}`,
  };
}
