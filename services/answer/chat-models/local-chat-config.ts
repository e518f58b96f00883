// Configuration of the optional local chat model (QUARRY_CHAT_PROVIDER=local): which catalog model,
// where its file is, and how much of the machine it may use. Opt-in only; Quarry never picks it.
import { ConfigError, integer, modelsDir, optional, type Env } from "../../../lib/config.ts";
import { catalogChatModel, chatModelFile, CHAT_MODEL_CATALOG, isChatModelInstalled } from "../../../lib/models/chat-model-catalog.ts";
import { QuarryError } from "../../../lib/errors.ts";
import type { LocalChatModelOptions } from "./local-chat-model.ts";

export const CHAT_PROVIDERS = ["openai", "local"] as const;

/** The chat provider named by QUARRY_CHAT_PROVIDER; unset means the OpenAI-compatible one when OPENAI_BASE_URL is set. */
export function chatProvider(env: Env): (typeof CHAT_PROVIDERS)[number] | undefined {
  const value = optional(env, "QUARRY_CHAT_PROVIDER");
  if (value === undefined) return undefined;
  if (!(CHAT_PROVIDERS as readonly string[]).includes(value)) {
    throw new ConfigError(`QUARRY_CHAT_PROVIDER must be one of ${CHAT_PROVIDERS.join(", ")}, not "${value}"`);
  }
  return value as (typeof CHAT_PROVIDERS)[number];
}

/** Undefined unless QUARRY_CHAT_PROVIDER=local; then the installed model's options, or a ConfigError saying how to install it. */
export function localChatConfig(env: Env): LocalChatModelOptions | undefined {
  if (chatProvider(env) !== "local") return undefined;
  const name = optional(env, "QUARRY_LOCAL_LLM_MODEL") ?? CHAT_MODEL_CATALOG[0].name;
  try {
    catalogChatModel(name);
  } catch (error) {
    if (error instanceof QuarryError) throw new ConfigError(`QUARRY_LOCAL_LLM_MODEL: ${error.message}`);
    throw error;
  }
  const dir = modelsDir(env);
  if (!isChatModelInstalled(dir, name)) {
    throw new ConfigError(`QUARRY_CHAT_PROVIDER=local needs the chat model ${name} in ${dir}: install it once with \`quarry models fetch ${name}\``);
  }
  return {
    name,
    modelPath: chatModelFile(dir, name),
    contextTokens: integer(env, "QUARRY_LOCAL_LLM_CONTEXT_TOKENS", 8_192),
    maxOutputTokens: integer(env, "QUARRY_LOCAL_LLM_MAX_TOKENS", 512),
    // 0: all cores but one (see LocalChatModelOptions.threads).
    threads: integer(env, "QUARRY_LOCAL_LLM_THREADS", 0),
  };
}
