// OpenAI's embeddings request and response ↔ the embedder's Embed: `input` is a text or a list of
// texts, `model` a local model's name (empty: the default), and vectors come back as float lists
// or, as the `openai` npm client asks by default, base64 of little-endian float32.
import type { EmbedResponse } from "../../../gen/quarry/embedder/v1/embedder_pb.ts";
import { InvalidInputError } from "../../../lib/errors.ts";

export interface EmbeddingRequest {
  texts: string[];
  model: string;
  base64: boolean;
}

export function embeddingRequest(body: unknown): EmbeddingRequest {
  const given = body as { input?: unknown; model?: unknown; encoding_format?: unknown; dimensions?: unknown };
  const texts = typeof given.input === "string" ? [given.input] : given.input;
  if (!Array.isArray(texts) || texts.length === 0 || texts.some((t) => typeof t !== "string")) {
    throw new InvalidInputError("`input` must be a text or a non-empty array of texts (token arrays are not accepted)");
  }
  if (given.model !== undefined && typeof given.model !== "string") throw new InvalidInputError("`model` must be a local embedding model's name");
  if (given.encoding_format !== undefined && given.encoding_format !== "float" && given.encoding_format !== "base64") {
    throw new InvalidInputError('`encoding_format` must be "float" or "base64"');
  }
  if (given.dimensions !== undefined) throw new InvalidInputError("`dimensions` is not supported: a local model's vectors have the model's own dimension");
  return { texts: texts as string[], model: (given.model as string | undefined) ?? "", base64: given.encoding_format === "base64" };
}

export function embeddingResponse(response: EmbedResponse, request: EmbeddingRequest) {
  const encode = (values: number[]) => (request.base64 ? Buffer.from(new Float32Array(values).buffer).toString("base64") : values);
  const tokens = response.usage?.embeddingTokens ?? 0;
  return {
    object: "list",
    data: response.vectors.map((v, index) => ({ object: "embedding", index, embedding: encode(v.values) })),
    model: response.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
