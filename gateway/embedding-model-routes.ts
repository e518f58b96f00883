// ListEmbeddingModels: the local catalog (lib/models/model-catalog.ts, what `quarry models fetch`
// installs) and the deployment's default, asked of the embedder so an OpenAI-compatible endpoint's
// model is listed (first) even though no catalog names it.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { EmbedderService } from "../gen/quarry/embedder/v1/embedder_pb.ts";
import { MODEL_CATALOG } from "../lib/models/model-catalog.ts";
import type { ListEmbeddingModelsResponseSchema } from "../gen/quarry/gateway/v1/gateway_pb.ts";

export async function listEmbeddingModels(embedder: Client<typeof EmbedderService>): Promise<MessageInitShape<typeof ListEmbeddingModelsResponseSchema>> {
  const fallback = await embedder.getModelInfo({});
  const models = MODEL_CATALOG.map((m) => ({ name: m.name, description: m.description, dimension: m.dimension, maxInputTokens: m.maxTokens }));
  if (!models.some((m) => m.name === fallback.model)) {
    models.unshift({ name: fallback.model, description: "this deployment's embedding endpoint", dimension: fallback.dimension, maxInputTokens: fallback.maxInputTokens });
  }
  return { models, defaultModel: fallback.model };
}
