// A chat model that runs on this machine: a GGUF file evaluated by llama.cpp through node-llama-cpp
// (prebuilt CPU binary from npm; its install script, which could try to download or build, is not
// allowed to run). It runs in the answer service's own thread: llama.cpp evaluates tokens on its
// own native threads and node-llama-cpp awaits them as async work, so the event loop only sees
// one callback per streamed piece of text and keeps serving other RPCs meanwhile (the real-model
// test measures the loop's delay during generation). A worker thread would add a message hop per
// token and a second copy of the bindings for nothing.
import { availableParallelism } from "node:os";
import type { ChatMessage, ChatModel, ChatUsage } from "./chat-model.ts";
import { FailedPreconditionError, UnavailableError } from "../../../lib/errors.ts";

export interface LocalChatModelOptions {
  /** The catalog name, reported as the turn's model. */
  name: string;
  modelPath: string;
  /** Tokens of the context window: prompt (system, numbered context, question) and answer together. */
  contextTokens?: number;
  /** Most tokens one answer may take. */
  maxOutputTokens?: number;
  /**
   * CPU threads for evaluation; all cores but one when unset. llama.cpp's threads wait for each
   * other at every step, so one of them preempted by the gateway or the embedder stalls them all
   * (on two busy cores, two threads generated ~0.1 token/s where one made 12).
   */
  threads?: number;
  /** 0 (greedy) by default: answers should stick to the context, and the same question gets the same answer. */
  temperature?: number;
}

// Only the few members used here, so node-llama-cpp's types stay inside this module and the module
// loads (with the model) on the first answer, not when Quarry starts without a local model.
interface Loaded {
  chat: import("node-llama-cpp").LlamaChat;
  sequence: import("node-llama-cpp").LlamaContextSequence;
  dispose(): Promise<void>;
}

/**
 * Answers one question at a time: two cores do one generation at full speed or two at half, and
 * one sequence keeps the shared system prompt's evaluated tokens for the next question (llama.cpp
 * re-evaluates only what differs from the sequence's last prompt).
 */
export class LocalChatModel implements ChatModel {
  readonly name: string;
  readonly #options: LocalChatModelOptions;
  #loaded?: Promise<Loaded>;
  #turn: Promise<void> = Promise.resolve();

  constructor(options: LocalChatModelOptions) {
    this.name = options.name;
    this.#options = options;
  }

  /** Loads the model now rather than on the first question; stream() calls it anyway. */
  load(): Promise<Loaded> {
    if (!this.#loaded) {
      const loading = this.#load();
      this.#loaded = loading;
      // A failed load is tried again by the next question rather than cached as failed for good.
      loading.catch(() => {
        if (this.#loaded === loading) this.#loaded = undefined;
      });
    }
    return this.#loaded;
  }

  async #load(): Promise<Loaded> {
    const { getLlama, LlamaChat, LlamaLogLevel } = await import("node-llama-cpp");
    // CPU only and never a build: a build or a GPU probe would reach for downloads and toolchains.
    const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false }).catch((error: unknown) => {
      throw new UnavailableError(`node-llama-cpp could not load its prebuilt CPU binary: ${(error as Error).message}`, { cause: error });
    });
    const model = await llama.loadModel({ modelPath: this.#options.modelPath }).catch((error: unknown) => {
      throw new FailedPreconditionError(`could not load the local chat model ${this.#options.modelPath}: ${(error as Error).message}`, { cause: error });
    });
    const context = await model.createContext({
      contextSize: this.#options.contextTokens ?? 8_192,
      sequences: 1,
      threads: this.#options.threads || Math.max(1, availableParallelism() - 1),
    });
    const sequence = context.getSequence();
    const chat = new LlamaChat({ contextSequence: sequence });
    return {
      chat,
      sequence,
      dispose: async () => {
        chat.dispose();
        await context.dispose();
        await model.dispose();
        await llama.dispose();
      },
    };
  }

  async *stream(messages: ChatMessage[], options: { signal?: AbortSignal; onUsage?: (usage: ChatUsage) => void }): AsyncIterable<string> {
    const release = await this.#waitForTurn(options.signal);
    // Stopped when the caller stops reading (a client that went away) as well as on its signal.
    const stop = new AbortController();
    const onAbort = () => stop.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const pieces = new PieceQueue();
    try {
      const { chat, sequence } = await this.load();
      const before = sequence.tokenMeter.getState();
      const done = chat
        .generateResponse(toHistory(messages), {
          onTextChunk: (text) => pieces.push(text),
          signal: stop.signal,
          maxTokens: this.#options.maxOutputTokens ?? 512,
          temperature: this.#options.temperature ?? 0,
        })
        .then(
          () => {
            const used = sequence.tokenMeter.diff(before);
            options.onUsage?.({ promptTokens: used.usedInputTokens, completionTokens: used.usedOutputTokens });
            pieces.end();
          },
          (error: unknown) => pieces.fail(error),
        );
      for await (const piece of pieces) {
        // Pieces already queued when the caller aborted are not handed out.
        if (options.signal?.aborted) throw abortReason(options.signal);
        yield piece;
      }
      await done;
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      stop.abort();
      // The next question waits until this generation has really stopped using the sequence.
      await pieces.settled;
      release();
    }
  }

  async close(): Promise<void> {
    const loaded = this.#loaded;
    this.#loaded = undefined;
    if (loaded) await (await loaded.catch(() => undefined))?.dispose();
  }

  async #waitForTurn(signal?: AbortSignal): Promise<() => void> {
    let release!: () => void;
    const previous = this.#turn;
    this.#turn = new Promise<void>((resolve) => (release = resolve));
    await previous;
    if (signal?.aborted) {
      release();
      throw abortReason(signal);
    }
    return release;
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("the answer was cancelled");
}

/** The prompt as node-llama-cpp's chat history; the GGUF's own chat template formats it. */
function toHistory(messages: ChatMessage[]): import("node-llama-cpp").ChatHistoryItem[] {
  return messages.map((m) =>
    m.role === "system" ? { type: "system", text: m.content } : m.role === "user" ? { type: "user", text: m.content } : { type: "model", response: [m.content] },
  );
}

/** Text pieces from llama.cpp's callback, read as an async iterable; ends or fails once. */
class PieceQueue implements AsyncIterable<string> {
  readonly #pieces: string[] = [];
  #wake?: () => void;
  #finished = false;
  #error: unknown;
  #settle!: () => void;
  readonly settled = new Promise<void>((resolve) => (this.#settle = resolve));

  push(text: string): void {
    if (!text) return;
    this.#pieces.push(text);
    this.#wake?.();
  }

  end(): void {
    this.#finished = true;
    this.#settle();
    this.#wake?.();
  }

  fail(error: unknown): void {
    this.#error = error ?? new Error("generation failed");
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      if (this.#pieces.length > 0) {
        yield this.#pieces.splice(0).join("");
        continue;
      }
      if (this.#finished) {
        if (this.#error !== undefined) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}
