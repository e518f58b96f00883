// Batching across documents, fairly: while the model works, the calls that arrive (other
// documents the vectorizing stage holds at once) wait and then go to the model together. A model
// costs about the same per forward pass whether a document brought 1 chunk or 32, so short
// documents embedded one by one waste most of each pass; joined, the passes fill up. No timer: a
// call that finds the model idle starts at once, so nothing waits that did not have to.
//
// What waits is taken as one window (every waiting call of one kind, up to windowTexts texts),
// sorted by length across the window and sent as bands of similar length, about one forward pass
// each: a pass pads every text to its longest, so the sort has to span all the documents in hand,
// not one model call (issue #27). The next band goes to the model while one runs, so the model
// never waits for this thread between bands.
//
// Large calls are served in slices of about one forward pass, one slice per waiting call per
// round, round-robin: a document of 16,000 chunks gets a share of every window, and a document of
// one chunk that arrives behind it (or a question) goes ahead of the window's next band, not after
// the whole window. Behind small documents only, a newcomer waits for the window to finish.
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import { CancelledError } from "../../lib/errors.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";

interface Pending {
  texts: string[];
  kind: EmbeddingKind;
  /** Texts [0, next) are taken (done or in flight). */
  next: number;
  /** When the call came (performance.now()), for its wait until the model took its first texts. */
  arrived: number;
  vectors: Float32Array[];
  /** Texts whose vectors came back. */
  done: number;
  failed: boolean;
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
}

/** One text of a waiting call, taken into a window. */
interface Item {
  call: Pending;
  index: number;
}

export class CoalescingEmbedder implements Embedder {
  readonly #inner: Embedder;
  readonly #maxTexts: number;
  readonly #sliceTexts: number;
  readonly #sliceChars: number;
  readonly #windowTexts: number;
  /** Padded word pieces per band when the model counts them: the local model's pass (maxBatchTokens). */
  readonly #passTokens = 2048;
  readonly #onWait?: (model: string, seconds: number) => void;
  /** Calls with texts not yet taken, in turn order (a call served a slice goes to the back). */
  #queue: Pending[] = [];
  /** The window's bands not sent yet, longest first. */
  #bands: Item[][] = [];
  #inFlight = 0;

  /**
   * @param maxTexts bounds one model call (a band; it also holds at most sliceTexts).
   * @param sliceTexts the most texts one call contributes to a window per round (about one forward pass).
   * @param sliceChars the most characters of one call's slice (the local model's pass holds 2048
   *   tokens at most, about 8 full chunks of English).
   * @param onWait told, for each call, how long it waited before the model took its first texts.
   * @param windowTexts the most texts sorted together; bounds how long a newly arrived call waits
   *   (the window's bands in flight) and how much embedding a crash can lose beyond the checkpoints.
   */
  constructor(inner: Embedder, maxTexts = 256, sliceTexts = 32, sliceChars = 8192, onWait?: (model: string, seconds: number) => void, windowTexts = maxTexts) {
    this.#onWait = onWait;
    this.#inner = inner;
    this.#maxTexts = Math.max(1, maxTexts);
    this.#sliceTexts = Math.max(1, Math.min(sliceTexts, this.#maxTexts));
    this.#sliceChars = Math.max(1, sliceChars);
    this.#windowTexts = Math.max(this.#maxTexts, windowTexts);
  }

  info(): EmbeddingModelInfo {
    return this.#inner.info();
  }

  knownTokenShare(text: string): number {
    return this.#inner.knownTokenShare(text);
  }

  tokenCount(text: string): number {
    return this.#inner.tokenCount?.(text) ?? text.length;
  }

  /**
   * A call whose signal fires before any of its texts were taken leaves the queue unembedded
   * (CancelledError): a burst of questions whose callers reset their streams costs no passes. Once
   * a band holds its texts, the band is embedded for the calls batched with it anyway.
   */
  embed(texts: string[], kind: EmbeddingKind, signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    if (signal?.aborted) return Promise.reject(new CancelledError("embed: the caller cancelled the request"));
    return new Promise((resolve, reject) => {
      const settled = () => signal?.removeEventListener("abort", onAbort);
      const call: Pending = {
        texts,
        kind,
        next: 0,
        arrived: performance.now(),
        vectors: new Array<Float32Array>(texts.length),
        done: 0,
        failed: false,
        resolve: (vectors) => (settled(), resolve(vectors)),
        reject: (error) => (settled(), reject(error)),
      };
      const onAbort = () => {
        if (call.next === 0) this.#fail(call, new CancelledError("embed: the caller cancelled the request before its texts were embedded"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      // A call that has had no turn yet goes ahead of those that have had one.
      const firstServed = this.#queue.findIndex((c) => c.next > 0);
      this.#queue.splice(firstServed === -1 ? this.#queue.length : firstServed, 0, call);
      this.#pump();
    });
  }

  async close(): Promise<void> {
    await this.#inner.close();
  }

  /**
   * Keeps the model busy: the window's next band goes out while one runs (two model calls at most);
   * a new window is taken only once the model is idle, so that the calls that arrived meanwhile join it.
   */
  #pump(): void {
    while (this.#inFlight < 2) {
      let band: Item[] | undefined;
      if (this.#bands.length > 0) {
        // A question, or newcomers behind a large call, get one slice ahead of the window's next band.
        const kind = this.#bands[0][0].call.kind;
        const other = this.#queue.find((c) => c.kind !== kind && c.next === 0);
        band = (other ? this.#newcomerBand(other.kind) : undefined) ?? (this.#largeCallWaiting() ? this.#newcomerBand(kind) : undefined) ?? this.#bands.shift();
      } else if (this.#inFlight === 0 && this.#queue.length > 0) {
        this.#bands = this.#takeWindow();
        band = this.#bands.shift();
      }
      if (!band) return;
      this.#inFlight++;
      void this.#run(band).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  /**
   * Texts of every waiting call of the first call's kind, a slice per call per round in turn order,
   * up to windowTexts, sorted by length (longest first) and cut into bands of a slice each. While
   * newcomers (calls that have had no turn yet) wait behind a large call (one with more than a
   * slice still to go), the newcomers alone, up to one slice: a band is answered as a whole, so a
   * one-chunk document's vector comes back after a pass of its own size, not after the large one's.
   */
  #takeWindow(): Item[][] {
    const kind = this.#queue[0].kind;
    const ofKind = this.#queue.filter((c) => c.kind === kind);
    const newcomerBehindLarge = ofKind.some((c) => c.next === 0) && ofKind.some((c) => c.next > 0 && c.texts.length - c.next > this.#sliceTexts);
    if (newcomerBehindLarge) return [this.#newcomerBand(kind)!];
    const items = this.#takeRounds(ofKind, this.#windowTexts, Infinity);
    // By the model's word pieces when it can count them (a band then is exactly one of its padded
    // passes); by characters otherwise, which pads more where characters per word piece vary.
    const count = this.#inner.tokenCount?.bind(this.#inner);
    const length = new Map(items.map((item) => [item, count ? count(item.call.texts[item.index]) : item.call.texts[item.index].length]));
    items.sort((a, b) => length.get(b)! - length.get(a)!);
    // A band is about one forward pass, so a call let in ahead of the window's next band (see
    // #pump) waits for two passes at most (the one running and the one queued).
    const budget = count ? this.#passTokens : this.#sliceChars;
    const bands: Item[][] = [];
    for (let i = 0; i < items.length; ) {
      let chars = 0;
      let end = i;
      while (end < items.length && end - i < this.#sliceTexts) {
        chars += length.get(items[end])!;
        // Longest first: a pass pads to its first text's length.
        const over = count ? (end - i + 1) * length.get(items[i])! > budget : chars > budget;
        if (end > i && over) break;
        end++;
      }
      bands.push(items.slice(i, end));
      i = end;
    }
    return bands;
  }

  /** True when a call has more than a slice in the window's bands not sent yet. */
  #largeCallWaiting(): boolean {
    const unsent = new Map<Pending, number>();
    for (const band of this.#bands) for (const item of band) unsent.set(item.call, (unsent.get(item.call) ?? 0) + 1);
    return [...unsent.values()].some((count) => count > this.#sliceTexts);
  }

  /** One slice in all from the newcomers of this kind, or undefined when none waits. */
  #newcomerBand(kind: EmbeddingKind): Item[] | undefined {
    const newcomers = this.#queue.filter((c) => c.kind === kind && c.next === 0);
    if (newcomers.length === 0) return undefined;
    return this.#takeRounds(newcomers, this.#sliceTexts, 1);
  }

  /** Slices of the calls, round-robin, until `limit` texts or `rounds` rounds; the calls served go to the back of the queue. */
  #takeRounds(calls: Pending[], limit: number, rounds: number): Item[] {
    const items: Item[] = [];
    const served = new Set<Pending>();
    for (let round = 0; round < rounds && items.length < limit; round++) {
      let took = false;
      for (const call of calls) {
        const count = this.#sliceLength(call, limit - items.length);
        if (count <= 0) continue;
        if (call.next === 0) this.#onWait?.(this.#inner.info().model, (performance.now() - call.arrived) / 1000);
        for (let i = 0; i < count; i++) items.push({ call, index: call.next + i });
        call.next += count;
        served.add(call);
        took = true;
      }
      if (!took) break;
    }
    // Served calls go behind the ones that were not, so every call gets its turn.
    this.#queue = [...this.#queue.filter((c) => !served.has(c)), ...this.#queue.filter((c) => served.has(c) && c.next < c.texts.length)];
    return items;
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

  async #run(band: Item[]): Promise<void> {
    const live = band.filter((item) => !item.call.failed);
    if (live.length === 0) return;
    const kind = live[0].call.kind;
    try {
      const vectors = await this.#inner.embed(live.map((item) => item.call.texts[item.index]), kind);
      live.forEach((item, i) => this.#deliver(item, vectors[i]));
    } catch (error) {
      const calls = [...new Set(live.map((item) => item.call))];
      if (calls.length === 1) return this.#fail(calls[0], error);
      // One document's text may be what the model refused; each call's texts alone find out whose
      // it was, so a bad document never fails the documents it happened to be batched with.
      for (const call of calls) {
        if (call.failed) continue;
        const own = live.filter((item) => item.call === call);
        await this.#inner.embed(own.map((item) => call.texts[item.index]), kind).then(
          (vectors) => own.forEach((item, i) => this.#deliver(item, vectors[i])),
          (callError: unknown) => this.#fail(call, callError),
        );
      }
    }
  }

  #deliver(item: Item, vector: Float32Array): void {
    const { call } = item;
    if (call.failed) return;
    call.vectors[item.index] = vector;
    call.done++;
    if (call.done === call.texts.length) call.resolve(call.vectors);
  }

  #fail(call: Pending, error: unknown): void {
    if (call.failed) return;
    call.failed = true;
    this.#queue = this.#queue.filter((c) => c !== call);
    call.reject(error);
  }
}
