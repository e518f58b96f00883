// The models one embedder service serves. Each knowledge base names its model; a local model is
// loaded on first use (on its own worker thread, see ThreadedEmbedder) and kept, so a Quarry with
// an English and a Chinese knowledge base runs both models side by side and one with only English
// bases never pays for the Chinese model.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { InvalidInputError, NotFoundError } from "../../lib/errors.ts";
import { CoalescingEmbedder } from "./coalescing-embedder.ts";
import type { Embedder } from "./embedder.ts";
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import { findModel, MANIFEST_FILE, MODEL_CATALOG, modelDir } from "../../lib/models/model-catalog.ts";

export interface EmbedderPool {
  /** The model a knowledge base gets when it names none. */
  readonly defaultModel: string;
  /** The embedder for a model (empty: the default), loaded on first use. */
  get(model?: string): Promise<Embedder>;
  /** The models served by name as configured, the default first (a local pool's catalog models are listed from the catalog). */
  served(): Promise<EmbeddingModelInfo[]>;
  close(): Promise<void>;
}

/** Local ONNX models from the models folder: the catalog's, or any folder with a quarry-model.json. */
export class LocalModelPool implements EmbedderPool {
  readonly defaultModel: string;
  readonly #modelsDir: string;
  readonly #load: (dir: string) => Promise<Embedder>;
  readonly #loaded = new Map<string, Promise<Embedder>>();

  constructor(modelsDir: string, defaultModel: string, load: (dir: string) => Promise<Embedder>) {
    this.#modelsDir = modelsDir;
    this.defaultModel = defaultModel;
    this.#load = load;
  }

  get(model?: string): Promise<Embedder> {
    const name = model || this.defaultModel;
    let loading = this.#loaded.get(name);
    if (!loading) {
      const dir = modelDir(this.#modelsDir, name);
      if (!findModel(name) && !existsSync(join(dir, MANIFEST_FILE))) {
        return Promise.reject(
          new NotFoundError(`no local embedding model named ${name}; the catalog has ${MODEL_CATALOG.map((m) => m.name).join(", ")} (see \`quarry models list\`)`),
        );
      }
      loading = this.#load(dir);
      this.#loaded.set(name, loading);
      // A model that failed to load (not installed yet) is tried again on the next call.
      loading.catch(() => this.#loaded.delete(name));
    }
    return loading;
  }

  async served(): Promise<EmbeddingModelInfo[]> {
    return [(await this.get()).info()];
  }

  async close(): Promise<void> {
    const models = await Promise.allSettled([...this.#loaded.values()]);
    await Promise.all(models.map((m) => (m.status === "fulfilled" ? m.value.close() : undefined)));
  }
}

/**
 * Embedders fixed at start-up, one per model name, the first the default: an OpenAI-compatible
 * endpoint's models (QUARRY_EMBEDDING_MODEL and QUARRY_EMBEDDING_MODELS), or a test's.
 */
export class FixedModelPool implements EmbedderPool {
  readonly defaultModel: string;
  readonly #byName = new Map<string, Embedder>();

  constructor(embedders: readonly Embedder[]) {
    if (embedders.length === 0) throw new Error("a fixed model pool needs at least one embedder");
    for (const embedder of embedders) this.#byName.set(embedder.info().model, embedder);
    this.defaultModel = embedders[0]!.info().model;
  }

  async get(model?: string): Promise<Embedder> {
    const embedder = this.#byName.get(model || this.defaultModel);
    if (!embedder) {
      const names = [...this.#byName.keys()];
      throw new InvalidInputError(`this embedder serves ${names.length === 1 ? `${names[0]} only` : names.join(", ")}, not ${model}`);
    }
    return embedder;
  }

  async served(): Promise<EmbeddingModelInfo[]> {
    return [...this.#byName.values()].map((embedder) => embedder.info());
  }

  async close(): Promise<void> {
    await Promise.all([...this.#byName.values()].map((embedder) => embedder.close()));
  }
}

/** One embedder that serves one model only. */
export class SingleModelPool extends FixedModelPool {
  constructor(embedder: Embedder) {
    super([embedder]);
  }
}

/**
 * Each model's calls joined into shared forward passes (CoalescingEmbedder), one coalescer per
 * model; windowTexts (default maxTexts) is how many waiting texts are sorted by length together.
 * A model that names its batch in texts (a remote endpoint's request) gets bands of that many texts
 * whatever their length: the character budget stands in for a local pass's word pieces, and cut a
 * request of 32 chunks of ~900 characters into four.
 */
export function coalescingPool(pool: EmbedderPool, maxTexts: number, onWait?: (model: string, seconds: number) => void, windowTexts = maxTexts): EmbedderPool {
  return wrappedPool(pool, (embedder) =>
    embedder.batchTexts === undefined
      ? new CoalescingEmbedder(embedder, maxTexts, undefined, undefined, onWait, windowTexts)
      : new CoalescingEmbedder(embedder, maxTexts, embedder.batchTexts, Number.POSITIVE_INFINITY, onWait, windowTexts),
  );
}

/** The pool's models, each behind one wrapper made on first use (so every caller shares it). */
export function wrappedPool(pool: EmbedderPool, wrap: (embedder: Embedder) => Embedder): EmbedderPool {
  const wrappers = new Map<Embedder, Embedder>();
  return {
    defaultModel: pool.defaultModel,
    async get(model?: string) {
      const embedder = await pool.get(model);
      let wrapper = wrappers.get(embedder);
      if (!wrapper) wrappers.set(embedder, (wrapper = wrap(embedder)));
      return wrapper;
    },
    served: () => pool.served(),
    close: () => pool.close(),
  };
}
