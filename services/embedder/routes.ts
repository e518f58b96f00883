import type { ConnectRouter } from "@connectrpc/connect";
import { EmbedderService, EmbeddingKind } from "../../gen/quarry/embedder/v1/embedder_pb.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { assertDimension } from "../../lib/dimension-check.ts";
import type { EmbedderPool } from "./embedder-pool.ts";

/** More texts than this in one call is a client bug, not a workload; batching is the embedder's job. */
const MAX_TEXTS_PER_CALL = 4096;

export function embedderRoutes(models: EmbedderPool) {
  return (router: ConnectRouter) =>
    router.service(EmbedderService, {
      async embed(request, context) {
        if (request.texts.length > MAX_TEXTS_PER_CALL) {
          throw new InvalidInputError(`at most ${MAX_TEXTS_PER_CALL} texts per call, got ${request.texts.length}`);
        }
        const embedder = await models.get(request.model);
        const info = embedder.info();
        // A caller gone before the model took its texts (a reset stream) costs no forward pass.
        const vectors = await embedder.embed(request.texts, request.kind === EmbeddingKind.QUERY ? "query" : "document", context.signal);
        if (request.expectedDimension) {
          assertDimension(vectors, request.expectedDimension, { knowledgeBase: "(requested)", expectedModel: "(requested)", actualModel: info.model });
        }
        return {
          vectors: vectors.map((v, i) => ({ values: Array.from(v), knownTokenShare: embedder.knownTokenShare(request.texts[i]) })),
          model: info.model,
          dimension: info.dimension,
        };
      },
      async getModelInfo(request) {
        const info = (await models.get(request.model)).info();
        return { model: info.model, dimension: info.dimension, maxInputTokens: info.maxInputTokens };
      },
      async listModels() {
        return { models: (await models.served()).map((info) => ({ model: info.model, dimension: info.dimension, maxInputTokens: info.maxInputTokens })) };
      },
    });
}
