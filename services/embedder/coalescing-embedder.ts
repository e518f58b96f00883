// Batching across documents: while one embed call runs, the calls that arrive (other documents the
// vectorizing stage holds at once) wait and then go to the model together as one call. A model
// costs about the same per forward pass whether a document brought 1 chunk or 32, so short
// documents embedded one by one waste most of each pass; joined, the passes fill up. No timer:
// a call that finds the model idle starts at once, so nothing waits that did not have to.
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";

interface Pending {
  texts: string[];
  kind: EmbeddingKind;
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
}

export class CoalescingEmbedder implements Embedder {
  readonly #inner: Embedder;
  readonly #maxTexts: number;
  readonly #pending: Pending[] = [];
  #running = false;

  /** maxTexts bounds one joined call (a call larger than that on its own still goes alone). */
  constructor(inner: Embedder, maxTexts = 256) {
    this.#inner = inner;
    this.#maxTexts = Math.max(1, maxTexts);
  }

  info(): EmbeddingModelInfo {
    return this.#inner.info();
  }

  knownTokenShare(text: string): number {
    return this.#inner.knownTokenShare(text);
  }

  embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.#pending.push({ texts, kind, resolve, reject });
      this.#pump();
    });
  }

  async close(): Promise<void> {
    await this.#inner.close();
  }

  #pump(): void {
    if (this.#running || this.#pending.length === 0) return;
    const group = this.#takeGroup();
    this.#running = true;
    void this.#run(group).finally(() => {
      this.#running = false;
      this.#pump();
    });
  }

  /** The oldest waiting calls of one kind, in arrival order, up to maxTexts in all. */
  #takeGroup(): Pending[] {
    const kind = this.#pending[0].kind;
    const group: Pending[] = [];
    let size = 0;
    for (let i = 0; i < this.#pending.length; ) {
      const call = this.#pending[i];
      if (call.kind !== kind || (group.length > 0 && size + call.texts.length > this.#maxTexts)) {
        i++;
        continue;
      }
      group.push(call);
      size += call.texts.length;
      this.#pending.splice(i, 1);
    }
    return group;
  }

  async #run(group: Pending[]): Promise<void> {
    try {
      const vectors = await this.#inner.embed(group.flatMap((call) => call.texts), group[0].kind);
      let offset = 0;
      for (const call of group) {
        call.resolve(vectors.slice(offset, offset + call.texts.length));
        offset += call.texts.length;
      }
    } catch (error) {
      if (group.length === 1) return group[0].reject(error);
      // One document's text may be what the model refused; each call alone finds out whose it was,
      // so a bad document never fails the documents it happened to be batched with.
      for (const call of group) {
        await this.#inner.embed(call.texts, call.kind).then(call.resolve, call.reject);
      }
    }
  }
}
