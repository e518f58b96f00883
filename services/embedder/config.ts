import { DEFAULT_MODEL } from "../../lib/models/model-catalog.ts";
import { ConfigError, integer, modelsDir, optional, optionalUrl, servicePort, type Env } from "../../lib/config.ts";

export type EmbedderConfig =
  | {
      port: number;
      provider: "local";
      modelsDir: string;
      /** The model knowledge bases get when they name none. */
      defaultModel: string;
      batchSize: number;
    }
  | {
      port: number;
      provider: "openai";
      baseURL: string;
      apiKey: string;
      model: string;
      dimension: number;
      /** Further models the same endpoint serves (QUARRY_EMBEDDING_MODELS), for knowledge bases that name them. */
      moreModels: { model: string; dimension: number }[];
      maxInputTokens: number;
      requestDimensions: boolean;
      sendInputType: boolean;
      /** Texts per request; servers cap it (text-embeddings-inference at 32 unless told, OpenAI at 2,048). */
      batchSize: number;
    };

export function embedderConfig(env: Env): EmbedderConfig {
  const port = servicePort(env, "embedder");
  const provider = optional(env, "QUARRY_EMBEDDING_PROVIDER") ?? "local";
  if (provider === "local") {
    const defaultModel = optional(env, "QUARRY_EMBEDDING_MODEL") ?? DEFAULT_MODEL;
    return { port, provider, modelsDir: modelsDir(env), defaultModel, batchSize: integer(env, "QUARRY_EMBEDDING_BATCH", 32) };
  }
  if (provider !== "openai") throw new ConfigError(`QUARRY_EMBEDDING_PROVIDER must be "local" or "openai", not "${provider}"`);
  const baseURL = optionalUrl(env, "QUARRY_EMBEDDING_BASE_URL") ?? optionalUrl(env, "OPENAI_BASE_URL");
  const model = optional(env, "QUARRY_EMBEDDING_MODEL");
  const dimension = integer(env, "QUARRY_EMBEDDING_DIMENSION", 0);
  if (!baseURL) throw new ConfigError("QUARRY_EMBEDDING_BASE_URL (or OPENAI_BASE_URL) is not set: the openai embedding provider needs its endpoint");
  if (!model) throw new ConfigError("QUARRY_EMBEDDING_MODEL is not set: the openai embedding provider needs a model name");
  if (!dimension) throw new ConfigError("QUARRY_EMBEDDING_DIMENSION is not set: knowledge bases fix their vector dimension at creation");
  return {
    port,
    provider,
    baseURL,
    apiKey: optional(env, "QUARRY_EMBEDDING_API_KEY") ?? optional(env, "OPENAI_API_KEY") ?? "not-needed",
    model,
    dimension,
    moreModels: moreModels(optional(env, "QUARRY_EMBEDDING_MODELS"), model),
    maxInputTokens: integer(env, "QUARRY_EMBEDDING_MAX_TOKENS", 512),
    requestDimensions: optional(env, "QUARRY_EMBEDDING_REQUEST_DIMENSIONS") === "1",
    sendInputType: optional(env, "QUARRY_EMBEDDING_INPUT_TYPE") === "1",
    batchSize: integer(env, "QUARRY_EMBEDDING_BATCH", 32),
  };
}

/** QUARRY_EMBEDDING_MODELS: "name:dimension" pairs, comma-separated; the default model may be among them. */
function moreModels(value: string | undefined, defaultModel: string): { model: string; dimension: number }[] {
  if (!value) return [];
  const models: { model: string; dimension: number }[] = [];
  for (const entry of value.split(",").map((e) => e.trim()).filter(Boolean)) {
    // The name may hold colons itself (text-embedding-3-small, but also org:model): the dimension is after the last.
    const at = entry.lastIndexOf(":");
    const model = entry.slice(0, at).trim();
    const dimension = Number(entry.slice(at + 1));
    if (at <= 0 || !model || !Number.isInteger(dimension) || dimension <= 0) {
      throw new ConfigError(`QUARRY_EMBEDDING_MODELS takes name:dimension pairs separated by commas (e.g. "text-embedding-3-small:1536,bge-m3:1024"); "${entry}" is not one`);
    }
    if (model !== defaultModel && !models.some((m) => m.model === model)) models.push({ model, dimension });
  }
  return models;
}
