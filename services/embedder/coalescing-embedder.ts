// Batching across documents, fairly: while one embed call runs, the calls that arrive (other
// documents the vectorizing stage holds at once) wait and then go to the model together. A model
// costs about the same per forward pass whether a document brought 1 chunk or 32, so short
// documents embedded one by one waste most of each pass; joined, the passes fill up. No timer: a
// call that finds the model idle starts at once, so nothing waits that did not have to.
//
// Large calls are served in slices of about one forward pass, one slice per waiting call per
// model call, round-robin: a document of 16,000 chunks gets a slice in every pass, but a document
// of one chunk that arrives meanwhile waits for the pass in flight, not for the whole large one.
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";

interface Pending {
  texts: string[];
  kind: EmbeddingKind;
  /** Texts [0, next) are taken (done or in flight). */
  next: number;
  /** When the call came (performance.now()), for its wait until the model took its first texts. */
  arrived: number;
  vectors: Float32Array[];
  failed: boolean;
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
}

interface Slice {
  call: Pending;
  from: number;
  texts: string[];
}

export class CoalescingEmbedder implements Embedder {
  readonly #inner: Embedder;
  readonly #maxTexts: number;
  readonly #sliceTexts: number;
  readonly #sliceChars: number;
  readonly #onWait?: (model: string, seconds: number) => void;
  /** Calls with texts not yet taken, in turn order (a call served a slice goes to the back). */
  #queue: Pending[] = [];
  #running = false;

  /**
   * @param maxTexts bounds one joined model call.
   * @param sliceTexts the most texts one call contributes to a model call (about one forward pass).
   * @param sliceChars the most characters of one call's slice (the local model's pass holds 2048
   *   tokens at most, about 8 full chunks of English).
   * @param onWait told, for each call, how long it waited before the model took its first texts.
   */
  constructor(inner: Embedder, maxTexts = 256, sliceTexts = 32, sliceChars = 8192, onWait?: (model: string, seconds: number) => void) {
    this.#onWait = onWait;
    this.#inner = inner;
    this.#maxTexts = Math.max(1, maxTexts);
    this.#sliceTexts = Math.max(1, Math.min(sliceTexts, this.#maxTexts));
    this.#sliceChars = Math.max(1, sliceChars);
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
      const call: Pending = { texts, kind, next: 0, arrived: performance.now(), vectors: new Array<Float32Array>(texts.length), failed: false, resolve, reject };
      // A call that has had no turn yet goes ahead of those that have had one.
      const firstServed = this.#queue.findIndex((c) => c.next > 0);
      this.#queue.splice(firstServed === -1 ? this.#queue.length : firstServed, 0, call);
      this.#pump();
    });
  }

  async close(): Promise<void> {
    await this.#inner.close();
  }

  #pump(): void {
    if (this.#running || this.#queue.length === 0) return;
    const group = this.#takeGroup();
    this.#running = true;
    void this.#run(group).finally(() => {
      this.#running = false;
      this.#pump();
    });
  }

  /**
   * One slice from each waiting call of the first call's kind, in turn order, up to maxTexts in
   * all. While newcomers (calls that have had no turn yet) wait behind a large call (one with more
   * than a slice still to go), the newcomers alone, up to one slice: the model answers a joined
   * call as a whole, so a one-chunk document's vector comes back after a pass of its own size,
   * not after a pass full of the large document's chunks.
   */
  #takeGroup(): Slice[] {
    const kind = this.#queue[0].kind;
    const group: Slice[] = [];
    const ofKind = this.#queue.filter((c) => c.kind === kind);
    const newcomerBehindLarge = ofKind.some((c) => c.next === 0) && ofKind.some((c) => c.next > 0 && c.texts.length - c.next > this.#sliceTexts);
    const limit = newcomerBehindLarge ? this.#sliceTexts : this.#maxTexts;
    let size = 0;
    for (const call of this.#queue) {
      if (call.kind !== kind || (newcomerBehindLarge && call.next > 0)) continue;
      const count = this.#sliceLength(call, limit - size);
      if (count <= 0) continue;
      if (call.next === 0) this.#onWait?.(this.#inner.info().model, (performance.now() - call.arrived) / 1000);
      group.push({ call, from: call.next, texts: call.texts.slice(call.next, call.next + count) });
      call.next += count;
      size += count;
    }
    // Served calls go behind the ones that were not, so every call gets its turn.
    const served = new Set(group.map((s) => s.call));
    this.#queue = [...this.#queue.filter((c) => !served.has(c)), ...this.#queue.filter((c) => served.has(c) && c.next < c.texts.length)];
    return group;
  }

  /**
   * Texts of the call's next slice: at most sliceTexts, `room`, and sliceChars characters (but at
   * least one), so that a slice of long chunks is about as quick to embed as one of short ones.
   */
  #sliceLength(call: Pending, room: number): number {
    const most = Math.min(this.#sliceTexts, call.texts.length - call.next, room);
    let chars = 0;
    let count = 0;
    while (count < most) {
      chars += call.texts[call.next + count].length;
      if (count > 0 && chars > this.#sliceChars) break;
      count++;
    }
    return count;
  }

  async #run(group: Slice[]): Promise<void> {
    try {
      const vectors = await this.#inner.embed(group.flatMap((slice) => slice.texts), group[0].call.kind);
      let offset = 0;
      for (const slice of group) {
        this.#deliver(slice, vectors.slice(offset, offset + slice.texts.length));
        offset += slice.texts.length;
      }
    } catch (error) {
      if (group.length === 1) return this.#fail(group[0].call, error);
      // One document's text may be what the model refused; each slice alone finds out whose it was,
      // so a bad document never fails the documents it happened to be batched with.
      for (const slice of group) {
        if (slice.call.failed) continue;
        await this.#inner.embed(slice.texts, slice.call.kind).then(
          (vectors) => this.#deliver(slice, vectors),
          (sliceError: unknown) => this.#fail(slice.call, sliceError),
        );
      }
    }
  }

  #deliver(slice: Slice, vectors: Float32Array[]): void {
    const { call } = slice;
    if (call.failed) return;
    vectors.forEach((vector, i) => (call.vectors[slice.from + i] = vector));
    if (call.next >= call.texts.length && call.vectors.every((v) => v !== undefined)) call.resolve(call.vectors);
  }

  #fail(call: Pending, error: unknown): void {
    if (call.failed) return;
    call.failed = true;
    this.#queue = this.#queue.filter((c) => c !== call);
    call.reject(error);
  }
}
