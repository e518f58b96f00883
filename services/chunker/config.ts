import { DEFAULT_MODEL } from "../../lib/models/model-catalog.ts";
import { integer, modelsDir, optional, servicePort, type Env } from "../../lib/config.ts";
import { DEFAULT_MAX_DOCUMENT_CHUNKS } from "./chunk-document.ts";
import { DEFAULT_CHUNKING_LIMITS, type ChunkingLimits } from "./chunking-threads.ts";

export interface ChunkerConfig {
  port: number;
  /** The folder with tokenizer.json used to measure chunks in the embedding model's tokens. */
  tokenizerDir: string;
  /** Most chunks one document may become. */
  maxDocumentChunks: number;
  /** The threads splitting runs on, and their limits. */
  threads: ChunkingLimits;
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
    threads: {
      threads: Math.max(1, integer(env, "QUARRY_CHUNKER_THREADS", DEFAULT_CHUNKING_LIMITS.threads)),
      memoryMb: integer(env, "QUARRY_CHUNK_MEMORY_MB", DEFAULT_CHUNKING_LIMITS.memoryMb),
      timeoutMs: integer(env, "QUARRY_CHUNK_TIMEOUT_MS", DEFAULT_CHUNKING_LIMITS.timeoutMs),
    },
    tokenizerDir: optional(env, "QUARRY_TOKENIZER_DIR") ?? `${modelsDir(env)}/${localModel(env)}`,
  };
}
