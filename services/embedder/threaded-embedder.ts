// The local ONNX model on a worker thread, so embedding never blocks the event loop that serves
// RPCs (in embedded mode the gateway shares this process).
import { Worker } from "node:worker_threads";
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, QuarryError, UnavailableError } from "../../lib/errors.ts";
import type { ThreadResponse } from "./embedder-thread.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";
import { KnownTokenShare } from "./known-token-share.ts";
import type { OnnxEmbedderOptions } from "./onnx-embedder.ts";

const errorTypes: Record<string, new (message: string) => QuarryError> = {
  FailedPreconditionError,
  InvalidInputError,
  UnavailableError,
};

const CLOSE_WAIT_MS = 10_000;

export class ThreadedEmbedder implements Embedder {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: Float32Array[]): void; reject(e: Error): void }>();

  private constructor(
    private readonly worker: Worker,
    private readonly modelInfo: EmbeddingModelInfo,
    private readonly share: KnownTokenShare,
  ) {
    worker.on("message", (message: ThreadResponse) => {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) {
        const Type = errorTypes[message.error.name] ?? Error;
        waiter.reject(new Type(message.error.message));
      } else waiter.resolve(message.vectors ?? []);
    });
    worker.on("error", (error) => this.failAll(error));
    worker.on("exit", () => this.failAll(new UnavailableError("the embedding thread stopped")));
  }

  static load(modelDir: string, options: OnnxEmbedderOptions = {}): Promise<ThreadedEmbedder> {
    const worker = new Worker(new URL("./embedder-thread-entry.mjs", import.meta.url), { workerData: { modelDir, options } });
    return new Promise((resolve, reject) => {
      const onMessage = (message: { ready?: EmbeddingModelInfo; failed?: { name: string; message: string } }) => {
        if (message.ready) {
          worker.off("message", onMessage);
          // Tokenizing one query is cheap, so this stays on the calling thread.
          resolve(new ThreadedEmbedder(worker, message.ready, KnownTokenShare.fromModelDir(modelDir)));
        } else if (message.failed) {
          void worker.terminate();
          reject(new (errorTypes[message.failed.name] ?? Error)(message.failed.message));
        }
      };
      worker.on("message", onMessage);
      worker.once("error", reject);
    });
  }

  knownTokenShare(text: string): number {
    return this.share.of(text);
  }

  tokenCount(text: string): number {
    // [CLS] and [SEP], cut at the model's input as the thread does.
    return Math.min(this.modelInfo.maxInputTokens, this.share.count(text) + 2);
  }

  info(): EmbeddingModelInfo {
    return { ...this.modelInfo };
  }

  embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts, kind });
    });
  }

  async close(): Promise<void> {
    const id = this.nextId++;
    const closed = new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, close: true });
    }).catch(() => undefined);
    // The thread finishes the forward pass in flight (the queued ones are cancelled) before it
    // closes: a process that exits while onnxruntime runs a pass aborts instead of exiting.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
    await this.worker.terminate();
  }

  private failAll(error: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
