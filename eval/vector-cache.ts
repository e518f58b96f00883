// Embedding a full set takes tens of minutes on a loaded machine; the lists built from the vectors
// (SQLite, OpenSearch, another sample) change far more often than the vectors. So vectors are kept on
// disk per model and dataset, keyed by a hash of the text embedded and its kind (query or document):
// a rerun, a larger sample or a second backend embeds only what it has not seen.
import { createHash } from "node:crypto";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";

const KEY_BYTES = 16;

export class VectorCache {
  readonly #file: string;
  readonly #dimension: number;
  readonly #vectors: Map<string, Float32Array>;

  private constructor(file: string, dimension: number, vectors: Map<string, Float32Array>) {
    this.#file = file;
    this.#dimension = dimension;
    this.#vectors = vectors;
  }

  /** Opens (or starts) the cache file of one model on one dataset: records of key + float32 vector. */
  static async open(dir: string, model: string, dataset: string, dimension: number): Promise<VectorCache> {
    await mkdir(dir, { recursive: true });
    const file = join(dir, `vectors-${model}-${dataset}-${dimension}.bin`);
    const bytes = await readFile(file).catch(() => Buffer.alloc(0));
    const record = KEY_BYTES + dimension * 4;
    const vectors = new Map<string, Float32Array>();
    // A record cut short by an interrupted run is dropped, not misread.
    for (let at = 0; at + record <= bytes.length; at += record) {
      const key = bytes.subarray(at, at + KEY_BYTES).toString("hex");
      const copy = new Float32Array(dimension);
      Buffer.from(copy.buffer).set(bytes.subarray(at + KEY_BYTES, at + record));
      vectors.set(key, copy);
    }
    return new VectorCache(file, dimension, vectors);
  }

  static key(kind: string, text: string): string {
    return createHash("sha256").update(kind).update("\0").update(text).digest().subarray(0, KEY_BYTES).toString("hex");
  }

  get size(): number {
    return this.#vectors.size;
  }

  get(kind: string, text: string): Float32Array | undefined {
    return this.#vectors.get(VectorCache.key(kind, text));
  }

  /** Stores and appends at once, so a run stopped half way keeps what it embedded. */
  async put(kind: string, texts: readonly string[], vectors: readonly Float32Array[]): Promise<void> {
    const record = KEY_BYTES + this.#dimension * 4;
    const out = Buffer.alloc(record * texts.length);
    texts.forEach((text, i) => {
      const key = VectorCache.key(kind, text);
      const v = vectors[i];
      if (v.length !== this.#dimension) throw new Error(`vector of ${v.length} dimensions in a ${this.#dimension}-dimension cache`);
      this.#vectors.set(key, v);
      Buffer.from(key, "hex").copy(out, i * record);
      Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(out, i * record + KEY_BYTES);
    });
    await appendFile(this.#file, out);
  }
}
