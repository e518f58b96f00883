import { integer, modelsDir, optional, servicePort, type Env } from "../../lib/config.ts";

export interface ChunkerConfig {
  port: number;
  /** The folder with tokenizer.json used to measure chunks in the embedding model's tokens. */
  tokenizerDir: string;
}

export function chunkerConfig(env: Env): ChunkerConfig {
  return {
    port: servicePort(env, "chunker"),
    tokenizerDir: optional(env, "QUARRY_TOKENIZER_DIR") ?? `${modelsDir(env)}/${optional(env, "QUARRY_EMBEDDING_MODEL") ?? "all-MiniLM-L6-v2-int8"}`,
  };
}
