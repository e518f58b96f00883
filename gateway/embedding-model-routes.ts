// ListEmbeddingModels: the models the embedder serves as configured (an OpenAI-compatible
// endpoint's, which no catalog names, or the local default), first, then the local catalog
// (lib/models/model-catalog.ts, what `quarry models fetch` installs).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { EmbedderService } from "../gen/quarry/embedder/v1/embedder_pb.ts";
import { MODEL_CATALOG } from "../lib/models/model-catalog.ts";
import type { ListEmbeddingModelsResponseSchema } from "../gen/quarry/gateway/v1/gateway_pb.ts";

export async function listEmbeddingModels(embedder: Client<typeof EmbedderService>): Promise<MessageInitShape<typeof ListEmbeddingModelsResponseSchema>> {
  const { models: served } = await embedder.listModels({});
  const models = MODEL_CATALOG.map((m) => ({ name: m.name, description: m.description, dimension: m.dimension, maxInputTokens: m.maxTokens }));
  const endpoint = served
    .filter((s) => !models.some((m) => m.name === s.model))
    .map((s) => ({ name: s.model, description: "this deployment's embedding endpoint", dimension: s.dimension, maxInputTokens: s.maxInputTokens }));
  return { models: [...endpoint, ...models], defaultModel: served[0]?.model ?? "" };
}
