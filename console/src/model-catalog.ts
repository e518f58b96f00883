// The embedding models a base may be created with, and the deployment's default, as the server
// lists them (ListEmbeddingModels): an OpenAI-compatible endpoint's model included.
import { quarry } from "./api/client.ts";
import { useLoad, type Loaded } from "./use-load.ts";
import type { ListEmbeddingModelsResponse } from "../../gen/quarry/gateway/v1/gateway_pb.ts";

export function useEmbeddingModels(): Loaded<ListEmbeddingModelsResponse> {
  return useLoad(() => quarry.listEmbeddingModels({}), []);
}
