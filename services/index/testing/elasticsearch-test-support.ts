// Per-suite Elasticsearch isolation for tests: its own index prefix; cleanup deletes everything
// under it (indices, aliases, templates).
import { Client } from "@elastic/elasticsearch";
import { deleteElasticsearchNamespace } from "../elasticsearch/elasticsearch-namespace.ts";
import { engineTestSpace, type EngineTestSpace } from "./engine-test-space.ts";

export type ElasticsearchTestSpace = EngineTestSpace<Client>;

export function elasticsearchTestSpace(url: string): ElasticsearchTestSpace {
  return engineTestSpace(new Client({ node: url }), (prefix) => deleteElasticsearchNamespace(url, prefix));
}
