// Per-suite OpenSearch isolation for tests: its own prefix for indices and search pipelines;
// cleanup deletes everything under it (indices, aliases, the template, the pipelines).
import { Client } from "@opensearch-project/opensearch";
import { deleteOpenSearchNamespace } from "../opensearch/opensearch-namespace.ts";
import { engineTestSpace, type EngineTestSpace } from "./engine-test-space.ts";

export type OpenSearchTestSpace = EngineTestSpace<Client>;

export function openSearchTestSpace(url: string): OpenSearchTestSpace {
  return engineTestSpace(new Client({ node: url }), (prefix) => deleteOpenSearchNamespace(url, prefix));
}
