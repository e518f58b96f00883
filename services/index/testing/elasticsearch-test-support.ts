// Per-suite Elasticsearch isolation for tests: its own index prefix; cleanup deletes everything
// under it (indices, aliases, templates).
import { Client } from "@elastic/elasticsearch";
import { engineTestSpace, type EngineTestSpace } from "./engine-test-space.ts";

export type ElasticsearchTestSpace = EngineTestSpace<Client>;

export function elasticsearchTestSpace(url: string): ElasticsearchTestSpace {
  return engineTestSpace(new Client({ node: url }), async (prefix) => {
    const admin = new Client({ node: url });
    try {
      // Elasticsearch 8 refuses wildcard deletes (action.destructive_requires_name), so names are resolved first.
      const indices = Object.keys(await admin.indices.get({ index: `${prefix}*`, expand_wildcards: "all", allow_no_indices: true }));
      if (indices.length > 0) await admin.indices.delete({ index: indices.join(",") });
      const templates = await admin.indices.getIndexTemplate({ name: `${prefix}*` }).catch(() => ({ index_templates: [] }));
      for (const { name } of templates.index_templates) await admin.indices.deleteIndexTemplate({ name });
    } finally {
      await admin.close();
    }
  });
}
