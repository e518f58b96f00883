import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { availableParallelism, homedir } from "node:os";
import { basename, join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import * as ort from "onnxruntime-node";
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import { FailedPreconditionError, UnavailableError } from "../../lib/errors.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";
import { KnownTokenShare } from "./known-token-share.ts";
import { DEFAULT_MODEL, INSTALLED_FILES, readInstalledManifest, type ModelManifest } from "../../lib/models/model-catalog.ts";

/** Where `npm run setup` puts a model: $QUARRY_MODELS_DIR/<name>, or ~/.cache/quarry/models/<name>. */
export function defaultModelDir(name: string = DEFAULT_MODEL, env: NodeJS.ProcessEnv = process.env): string {
  return join(env.QUARRY_MODELS_DIR?.trim() || join(homedir(), ".cache", "quarry", "models"), name);
}

export interface OnnxEmbedderOptions {
  /** Texts per forward pass. Larger batches pad more; 32 suits 2 cores. A model that quantizes per pass takes 1. */
  batchSize?: number;
  /**
   * Most padded tokens (texts × longest text) per forward pass; default 2048. The memory a pass
   * needs grows with it (attention is texts × heads × length², all held in onnxruntime's arena,
   * which never gives memory back), while 8 texts of 256 tokens cost no more CPU than 32.
   */
  maxBatchTokens?: number;
  /** ONNX Runtime intra-op threads; defaults to the cores available, at most 2. */
  threads?: number;
  /**
   * Kinds of text the model reads whole when they are longer than its input: cut into windows it
   * can read, and the vector is the mean of the windows' vectors weighted by their word pieces.
   * Any other text is cut at the input limit (the model reads its beginning). Default: questions
   * (see WHOLE_BY_DEFAULT).
   */
  readWhole?: readonly EmbeddingKind[];
  /**
   * Whether a model that quantizes per pass (quantizesPerPass) may still be given several texts in
   * one pass. False by default, so a text's vector is its own; a study of the trade sets it.
   */
  batchQuantized?: boolean;
}

/**
 * Questions are read whole by default: a question longer than the model reads (an argument pasted
 * as the question, a long bug report) otherwise loses its end, and a question is one unit, so the
 * mean of its parts stands for it. Documents are not: the chunker already cuts them to fit, and a
 * document vector stands for what the model reads of it (docs/EVALUATION.md, issue #14).
 */
export const WHOLE_BY_DEFAULT: readonly EmbeddingKind[] = ["query"];

/**
 * Whether an ONNX model quantizes its activations at run time (the DynamicQuantizeLinear operator,
 * whose one scale spans the whole input tensor: every text of the pass). The vector such a model
 * gives a text then depends on the texts embedded beside it — bge-small-zh as Maven Central ships
 * it gave one passage vectors with cosine 0.992 to each other in two batches — so two ingests of
 * the same document store different vectors, and a question (always embedded alone) meets passages
 * quantized among strangers. Read from the graph's bytes: onnxruntime does not list a session's
 * operators, and the operator's name is stored as plain text in the protobuf.
 */
export function quantizesPerPass(model: Uint8Array): boolean {
  return Buffer.from(model.buffer, model.byteOffset, model.byteLength).includes("DynamicQuantizeLinear");
}


/**
 * A BERT-style embedding model run locally with ONNX Runtime, as its manifest says: word-piece
 * tokenisation, the query instruction prefix on questions only, mean pooling over real tokens
 * (MiniLM, as sentence-transformers does) or the [CLS] state (bge), then L2 normalisation.
 */
export class OnnxEmbedder implements Embedder {
  readonly #session: ort.InferenceSession;
  readonly #tokenizer: Tokenizer;
  readonly #info: EmbeddingModelInfo;
  readonly #batchSize: number;
  readonly #maxBatchTokens: number;
  readonly #clsId: number;
  readonly #sepId: number;
  readonly #padId: number;
  readonly #share: KnownTokenShare;
  readonly #manifest: ModelManifest;
  readonly #readWhole: ReadonlySet<EmbeddingKind>;
  /**
   * Forward passes run one at a time (concurrent runs would only fight over the same cores), a
   * question's before the next pass of a document call: during a bulk ingest the vectorizing stage
   * sends hundreds of chunks in one call, and a question must wait for one pass, not all of them.
   */
  readonly #waiting: Record<EmbeddingKind, { start(): void; cancel(error: Error): void }[]> = { query: [], document: [] };
  #running = false;
  #closing = false;
  readonly #calls = new Set<Promise<unknown>>();

  private constructor(session: ort.InferenceSession, tokenizer: Tokenizer, manifest: ModelManifest, batchSize: number, maxBatchTokens: number, readWhole: readonly EmbeddingKind[]) {
    this.#session = session;
    this.#readWhole = new Set(readWhole);
    this.#manifest = manifest;
    const info = { model: manifest.name, dimension: manifest.dimension, maxInputTokens: manifest.maxTokens };
    this.#tokenizer = tokenizer;
    this.#info = info;
    this.#batchSize = batchSize;
    this.#maxBatchTokens = maxBatchTokens;
    this.#clsId = tokenId(tokenizer, "[CLS]");
    this.#sepId = tokenId(tokenizer, "[SEP]");
    this.#padId = tokenId(tokenizer, "[PAD]");
    this.#share = new KnownTokenShare(tokenizer, { scripts: manifest.scripts });
  }

  static async load(modelDir: string, options: OnnxEmbedderOptions = {}): Promise<OnnxEmbedder> {
    const missing = INSTALLED_FILES.filter((f) => !existsSync(join(modelDir, f)));
    if (missing.length > 0) {
      throw new FailedPreconditionError(
        `the local embedding model is missing from ${modelDir} (no ${missing.join(", ")}); install it with \`quarry models fetch ${basename(modelDir)}\` (or \`npm run setup\`)`,
      );
    }
    const manifest = readInstalledManifest(modelDir);
    const tokenizer = new Tokenizer(
      JSON.parse(await readFile(join(modelDir, "tokenizer.json"), "utf8")),
      JSON.parse(await readFile(join(modelDir, "tokenizer_config.json"), "utf8")),
    );
    const modelPath = join(modelDir, "model.onnx");
    // A text per pass for such a model: its vector is then a function of its text alone, as a
    // question's is. Measured on chunk-sized texts it costs nothing (padding goes too); on titles of
    // a dozen characters embedding takes 1.36 times as long (docs/MODELS.md#vectors-that-depend-only-on-the-text).
    const onePerPass = !options.batchQuantized && quantizesPerPass(await readFile(modelPath));
    const session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: Math.max(1, options.threads ?? Math.min(2, availableParallelism())),
      // One operator at a time; parallelism inside each matmul is what pays off on a small CPU.
      interOpNumThreads: 1,
      executionMode: "sequential",
      graphOptimizationLevel: "all",
      // The intra-op threads sleep instead of spinning between operators. Spinning wins when the
      // model has the cores to itself, but in Quarry the main thread parses, chunks and indexes
      // other documents meanwhile, and spinning threads took its core and stalled each other.
      extra: { session: { intra_op: { allow_spinning: "0" } } },
      // The memory pattern plans (and keeps) a block per input shape, and padded batches come in
      // many shapes: with it the embedded server sat at 1.5 GB; without it 0.5 GB at the same CPU
      // time (docs/benchmarks/memory.md). The arena stays: without it every pass maps fresh pages, +50% CPU.
      enableMemPattern: false,
    });
    const batchSize = onePerPass ? 1 : Math.max(1, options.batchSize ?? 32);
    return new OnnxEmbedder(session, tokenizer, manifest, batchSize, Math.max(1, options.maxBatchTokens ?? 2048), options.readWhole ?? WHOLE_BY_DEFAULT);
  }

  info(): EmbeddingModelInfo {
    return { ...this.#info };
  }

  /** The most texts one forward pass holds: 1 for a model that quantizes per pass. */
  get textsPerPass(): number {
    return this.#batchSize;
  }

  knownTokenShare(text: string): number {
    return this.#share.of(text);
  }

  tokenCount(text: string): number {
    return this.tokenize(text).length;
  }

  /** Word pieces the model reads for a text, [CLS] and [SEP] included, after truncation. */
  tokenize(text: string): number[] {
    return this.#windows(text, "", false)[0];
  }

  /**
   * The model's inputs for one text, [CLS] and [SEP] included: its first input's worth of word
   * pieces, or (whole) all of them in windows of equal size, each led by the instruction prefix.
   */
  #windows(text: string, prefix: string, whole: boolean): number[][] {
    // tokenizers.js ignores tokenizer.json's truncation section, so cut here; the limit counts [CLS] and [SEP].
    const lead = this.#prefixIds(prefix);
    const ids = this.#tokenizer.encode(text, { add_special_tokens: false }).ids;
    const room = Math.max(1, this.#info.maxInputTokens - 2 - lead.length);
    const input = (part: number[]) => [this.#clsId, ...lead, ...part, this.#sepId];
    if (!whole || ids.length <= room) return [input(ids.slice(0, room))];
    // Equal windows, so a short tail does not weigh as much as a full window's worth of text.
    const count = Math.ceil(ids.length / room);
    const size = Math.ceil(ids.length / count);
    return Array.from({ length: count }, (_, w) => input(ids.slice(w * size, (w + 1) * size)));
  }

  #prefixIds(prefix: string): number[] {
    return prefix ? this.#tokenizer.encode(prefix, { add_special_tokens: false }).ids : [];
  }

  async embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    const call = this.#embedAll(texts, kind);
    this.#calls.add(call);
    try {
      return await call;
    } finally {
      this.#calls.delete(call);
    }
  }

  /** Waits for the pass in flight only: passes not started yet are cancelled (a shutdown has released their work). */
  async close(): Promise<void> {
    this.#closing = true;
    for (const kind of ["query", "document"] as const) {
      for (const waiting of this.#waiting[kind].splice(0)) waiting.cancel(new UnavailableError("the embedding model is closing"));
    }
    await Promise.allSettled([...this.#calls]);
    await this.#session.release();
  }

  /** Runs one forward pass when the model is free, questions first. */
  #pass<T>(kind: EmbeddingKind, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#closing) return reject(new UnavailableError("the embedding model is closing"));
      this.#waiting[kind].push({
        start: () =>
          void work()
            .then(resolve, reject)
            .finally(() => {
              this.#running = false;
              this.#startNext();
            }),
        cancel: reject,
      });
      this.#startNext();
    });
  }

  #startNext(): void {
    if (this.#running || this.#waiting.query.length + this.#waiting.document.length === 0) return;
    this.#running = true;
    // A pass blocks this thread while it runs; choosing the next one from a macrotask lets a
    // question that arrived meanwhile (a thread message) be queued before the choice is made.
    setImmediate(() => {
      const next = this.#waiting.query.shift() ?? this.#waiting.document.shift();
      if (next) next.start();
      else this.#running = false;
    });
  }

  async #embedAll(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    // The instruction prefix is part of what the model was trained to see (bge: before questions
    // only, so a short question lands near the passages that answer it, not near its paraphrases).
    const prefix = kind === "query" ? this.#manifest.queryPrefix : this.#manifest.passagePrefix;
    const windowsOf = texts.map((t) => this.#windows(t, prefix, this.#readWhole.has(kind)));
    const encoded = windowsOf.flat();
    const specialTokens = 2 + this.#prefixIds(prefix).length;
    // Batching texts of similar length wastes little on padding; the original order is restored below.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[b].length - encoded[a].length);
    const vectors = new Array<Float32Array>(encoded.length);
    for (let start = 0; start < order.length; ) {
      // Longest first, so the batch's padded length is its first text's.
      const longest = encoded[order[start]].length;
      const size = Math.max(1, Math.min(this.#batchSize, Math.floor(this.#maxBatchTokens / longest)));
      const indices = order.slice(start, start + size);
      start += size;
      const batchVectors = await this.#pass(kind, () => this.#forward(indices.map((i) => encoded[i])));
      indices.forEach((original, k) => (vectors[original] = batchVectors[k]));
    }
    let next = 0;
    return windowsOf.map((windows) => {
      const parts = vectors.slice(next, (next += windows.length));
      return parts.length === 1 ? parts[0] : weightedMean(parts, windows.map((w) => w.length - specialTokens), this.#manifest.normalize);
    });
  }

  async #forward(batch: number[][]): Promise<Float32Array[]> {
    const rows = batch.length;
    const seq = Math.max(...batch.map((ids) => ids.length));
    const inputIds = new BigInt64Array(rows * seq).fill(BigInt(this.#padId));
    const mask = new BigInt64Array(rows * seq);
    batch.forEach((ids, r) =>
      ids.forEach((id, t) => {
        inputIds[r * seq + t] = BigInt(id);
        mask[r * seq + t] = 1n;
      }),
    );
    const dims = [rows, seq];
    const output = await this.#session.run({
      input_ids: new ort.Tensor("int64", inputIds, dims),
      attention_mask: new ort.Tensor("int64", mask, dims),
      token_type_ids: new ort.Tensor("int64", new BigInt64Array(rows * seq), dims),
    });
    const hidden = output.last_hidden_state;
    const width = hidden.dims[2];
    if (width !== this.#info.dimension) {
      throw new FailedPreconditionError(
        `model ${this.#info.model} produced ${width}-dim vectors but quarry-model.json says ${this.#info.dimension}`,
      );
    }
    const data = hidden.data as Float32Array;
    return batch.map((ids, r) => poolVector(data, r, seq, width, ids.length, this.#manifest));
  }
}

/**
 * One row's vector from the hidden states: the [CLS] state, or the mean of the real tokens' states
 * (the first `length`; padding is at the end); then L2-normalised when the manifest says so.
 */
export function poolVector(
  data: Float32Array,
  row: number,
  seq: number,
  width: number,
  length: number,
  manifest: Pick<ModelManifest, "pooling" | "normalize">,
): Float32Array {
  const vector = new Float32Array(width);
  const base = row * seq * width;
  const tokens = manifest.pooling === "cls" ? 1 : length;
  for (let t = 0; t < tokens; t++) {
    const offset = base + t * width;
    for (let d = 0; d < width; d++) vector[d] += data[offset + d];
  }
  if (manifest.pooling === "mean") for (let d = 0; d < width; d++) vector[d] /= tokens;
  if (!manifest.normalize) return vector;
  let sum = 0;
  for (let d = 0; d < width; d++) sum += vector[d] * vector[d];
  const norm = Math.sqrt(sum) || 1;
  for (let d = 0; d < width; d++) vector[d] /= norm;
  return vector;
}

/** The windows' vectors averaged by the word pieces each read, normalised again when the model's vectors are. */
export function weightedMean(parts: readonly Float32Array[], weights: readonly number[], normalize: boolean): Float32Array {
  const out = new Float32Array(parts[0].length);
  const total = weights.reduce((a, b) => a + b, 0) || 1;
  parts.forEach((part, i) => {
    for (let d = 0; d < out.length; d++) out[d] += (part[d] * weights[i]) / total;
  });
  if (!normalize) return out;
  const norm = Math.sqrt(out.reduce((a, v) => a + v * v, 0)) || 1;
  return out.map((v) => v / norm);
}

function tokenId(tokenizer: Tokenizer, token: string): number {
  const id = tokenizer.token_to_id(token);
  if (id === undefined) throw new FailedPreconditionError(`the tokenizer has no ${token} token; is this a BERT-style model?`);
  return id;
}
