import OpenAI from "openai";
import { mapOpenAiError } from "../../../lib/openai-errors.ts";
import type { ChatMessage, ChatModel, ChatUsage } from "./chat-model.ts";

export interface OpenAiChatModelOptions {
  /** An OpenAI-compatible endpoint, e.g. "https://api.openai.com/v1" or "http://localhost:11434/v1". */
  baseURL: string;
  apiKey: string;
  model: string;
  /** Low by default: answers should stick to the context, not vary. */
  temperature?: number;
  maxOutputTokens?: number;
  /** Retries of the openai client for 429/5xx/connection errors before the stream starts. */
  maxRetries?: number;
  timeoutMs?: number;
}

/** A chat model behind any OpenAI-compatible /v1/chat/completions endpoint, streamed. */
export class OpenAiChatModel implements ChatModel {
  readonly name: string;
  readonly #client: OpenAI;
  readonly #options: OpenAiChatModelOptions;

  constructor(options: OpenAiChatModelOptions) {
    this.name = options.model;
    this.#options = options;
    this.#client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeoutMs ?? 120_000,
    });
  }

  async *stream(messages: ChatMessage[], options: { signal?: AbortSignal; onUsage?: (usage: ChatUsage) => void }): AsyncIterable<string> {
    const what = `chat endpoint ${this.#options.baseURL} (model ${this.#options.model})`;
    try {
      const stream = await this.#client.chat.completions.create(
        {
          model: this.#options.model,
          messages,
          stream: true,
          stream_options: { include_usage: true },
          temperature: this.#options.temperature ?? 0.1,
          ...(this.#options.maxOutputTokens ? { max_tokens: this.#options.maxOutputTokens } : {}),
        },
        { signal: options.signal },
      );
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta?.content;
        if (delta) yield delta;
        // With include_usage the last chunk has no choices and carries the usage; others have usage null.
        if (chunk.usage) options.onUsage?.({ promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens });
      }
    } catch (err) {
      throw mapOpenAiError(err, what);
    }
  }
}
