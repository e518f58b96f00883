// The embedder, as the index's change of embedding model calls it (model-change.ts): through the
// embedder's Connect client, with its errors mapped back to domain errors. Not one of the peers the
// index waits for at start-up (the embedder waits for the index), so it is only dialled when a
// change runs.
import { createClient, type Transport } from "@connectrpc/connect";
import { EmbedderService, EmbeddingKind } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import { toDomainError } from "../../lib/rpc/error-mapping.ts";
import type { ModelVectorizer } from "./catalog/model-change.ts";

/** Texts per Embed call: the embedder takes at most 4,096 and batches inside a call itself. */
const TEXTS_PER_CALL = 256;

export function embedderVectorizer(transport: () => Transport): ModelVectorizer {
  let client: ReturnType<typeof createClient<typeof EmbedderService>> | undefined;
  const embedder = () => (client ??= createClient(EmbedderService, transport()));
  const mapped = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw toDomainError(error);
    }
  };
  return {
    modelInfo: (model) =>
      mapped(async () => {
        const info = await embedder().getModelInfo({ model });
        return { model: info.model, dimension: info.dimension, maxInputTokens: info.maxInputTokens };
      }),
    embedDocuments: (model, texts, dimension) =>
      mapped(async () => {
        const vectors: Float32Array[] = [];
        for (let i = 0; i < texts.length; i += TEXTS_PER_CALL) {
          const res = await embedder().embed({ texts: texts.slice(i, i + TEXTS_PER_CALL), kind: EmbeddingKind.DOCUMENT, model, expectedDimension: dimension });
          vectors.push(...res.vectors.map((v) => Float32Array.from(v.values)));
        }
        return vectors;
      }),
  };
}
