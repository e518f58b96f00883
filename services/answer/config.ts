import { DEFAULT_MODEL } from "../../lib/models/model-catalog.ts";
import { ConfigError, integer, modelsDir, optional, optionalUrl, servicePort, type Env } from "../../lib/config.ts";
import type { RerankProtocol } from "./retrieval/rerank/http-reranker.ts";
import { DEFAULT_MAX_QUESTION_CHARS } from "./retrieval/retrieval-stage.ts";

export interface AnswerConfig {
  port: number;
  /** Unset: answers are extractive. */
  llm?: { baseURL: string; apiKey: string; model: string };
  contextTokenBudget: number;
  maxQuestionChars: number;
  /** Earlier rounds of a conversation the chat model sees (0: none, and follow-ups are not rewritten). */
  historyRounds: number;
  tokenizerDir: string;
  /** An HTTP rerank server; without it, rerank asks the chat model (when there is one). */
  rerank?: { protocol: RerankProtocol; url: string; model?: string; apiKey?: string; timeoutMs: number };
}

export function answerConfig(env: Env): AnswerConfig {
  const baseURL = optionalUrl(env, "OPENAI_BASE_URL");
  const model = optional(env, "QUARRY_CHAT_MODEL");
  return {
    port: servicePort(env, "answer"),
    // A chat model is used only when both its endpoint and its name are given.
    llm: baseURL && model ? { baseURL, model, apiKey: optional(env, "OPENAI_API_KEY") ?? "not-needed" } : undefined,
    contextTokenBudget: integer(env, "QUARRY_CONTEXT_TOKENS", 3_000),
    maxQuestionChars: integer(env, "QUARRY_MAX_QUESTION_CHARS", DEFAULT_MAX_QUESTION_CHARS),
    historyRounds: integer(env, "QUARRY_CHAT_HISTORY_ROUNDS", 5),
    tokenizerDir: optional(env, "QUARRY_TOKENIZER_DIR") ?? `${modelsDir(env)}/${DEFAULT_MODEL}`,
    rerank: rerankConfig(env),
  };
}

function rerankConfig(env: Env): AnswerConfig["rerank"] {
  const url = optionalUrl(env, "QUARRY_RERANK_URL", "http://localhost:8080");
  const protocol = optional(env, "QUARRY_RERANK_PROTOCOL") ?? "cohere";
  if (protocol !== "tei" && protocol !== "cohere") throw new ConfigError(`QUARRY_RERANK_PROTOCOL must be "tei" or "cohere", not "${protocol}"`);
  if (!url) return undefined;
  return {
    protocol,
    url,
    model: optional(env, "QUARRY_RERANK_MODEL"),
    apiKey: optional(env, "QUARRY_RERANK_API_KEY"),
    timeoutMs: integer(env, "QUARRY_RERANK_TIMEOUT_MS", 10_000),
  };
}
