import { integer, modelsDir, optional, ServicePorts, type Env } from "../../lib/config.ts";

export interface ChunkerConfig {
  port: number;
  /** The folder with tokenizer.json used to measure chunks in the embedding model's tokens. */
  tokenizerDir: string;
}

export function chunkerConfig(env: Env): ChunkerConfig {
  return {
    port: integer(env, "QUARRY_CHUNKER_PORT", ServicePorts.chunker),
    tokenizerDir: optional(env, "QUARRY_TOKENIZER_DIR") ?? `${modelsDir(env)}/${optional(env, "QUARRY_EMBEDDING_MODEL") ?? "all-MiniLM-L6-v2-int8"}`,
  };
}
