import { UnavailableError } from "../../../../lib/errors.ts";
import type { Reranker, RerankScore } from "./reranker.ts";

/**
 * The two rerank APIs servers speak:
 * - "tei": Hugging Face text-embeddings-inference, `POST /rerank` {query, texts} → [{index, score}].
 * - "cohere": Cohere's `POST /v1/rerank` {model, query, documents, top_n} →
 *   {results: [{index, relevance_score}]}, also served by Jina, SiliconFlow, vLLM, Xinference and others.
 */
export type RerankProtocol = "tei" | "cohere";

export interface HttpRerankerOptions {
  protocol: RerankProtocol;
  /** The server's base URL ("http://host:8080"); a URL already ending in /rerank is used as is. */
  url: string;
  /** Required by most /v1/rerank servers; TEI serves one model and ignores it. */
  model?: string;
  apiKey?: string;
  timeoutMs?: number;
}

const PATH: Record<RerankProtocol, string> = { tei: "/rerank", cohere: "/v1/rerank" };

export class HttpReranker implements Reranker {
  readonly name: string;
  readonly #endpoint: string;
  readonly #options: HttpRerankerOptions;

  constructor(options: HttpRerankerOptions) {
    const base = options.url.replace(/\/+$/, "");
    this.#endpoint = /\/rerank$/.test(base) ? base : `${base}${PATH[options.protocol]}`;
    this.#options = options;
    this.name = `${options.protocol} reranker ${this.#endpoint}`;
  }

  async rerank(query: string, texts: string[], options: { signal?: AbortSignal } = {}): Promise<RerankScore[]> {
    const { protocol, model, apiKey } = this.#options;
    const body =
      protocol === "tei"
        ? { query, texts, raw_scores: false, truncate: true }
        : { ...(model ? { model } : {}), query, documents: texts, top_n: texts.length, return_documents: false };
    const timeout = AbortSignal.timeout(this.#options.timeoutMs ?? 10_000);
    let res: Response;
    try {
      res = await fetch(this.#endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const why = timeout.aborted ? `no answer within ${this.#options.timeoutMs ?? 10_000} ms` : `unreachable (${(err as Error).message})`;
      throw new UnavailableError(why, { cause: err });
    }
    const text = await res.text();
    if (!res.ok) throw new UnavailableError(`HTTP ${res.status}${errorDetail(text)}`);
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      throw new UnavailableError("answered with a body that is not JSON");
    }
    const items = protocol === "tei" ? payload : (payload as { results?: unknown })?.results;
    if (!Array.isArray(items)) throw new UnavailableError(`answered without a ${protocol === "tei" ? "list of scores" : "results list"}`);
    return items.map((item: { index?: unknown; score?: unknown; relevance_score?: unknown }) => ({
      index: Number(item.index),
      score: Number(protocol === "tei" ? item.score : item.relevance_score),
    }));
  }
}

/** The server's own error message, short: TEI sends {error}, Cohere-style servers {message} or {detail}. */
function errorDetail(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    const message = parsed.error ?? parsed.message ?? parsed.detail;
    const text = typeof message === "string" ? message : typeof (message as { message?: unknown })?.message === "string" ? (message as { message: string }).message : "";
    return text ? `: ${text.slice(0, 200)}` : "";
  } catch {
    return "";
  }
}
