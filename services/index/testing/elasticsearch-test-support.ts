// Per-suite Elasticsearch isolation for tests: every factory call gets its own index prefix, and
// cleanup deletes everything under it (indices, aliases, templates) with a separate client, so
// a test that closed the engine's client can still clean up.
import { randomUUID } from "node:crypto";
import { Client } from "@elastic/elasticsearch";

export interface ElasticsearchTestSpace {
  client: Client;
  prefix: string;
  cleanup(): Promise<void>;
}

export function elasticsearchTestSpace(url: string): ElasticsearchTestSpace {
  const prefix = `quarry-test-${randomUUID().replaceAll("-", "").slice(0, 12)}-`;
  const client = new Client({ node: url });
  return {
    client,
    prefix,
    async cleanup() {
      const admin = new Client({ node: url });
      try {
        // Elasticsearch 8 refuses wildcard deletes (action.destructive_requires_name), so names are resolved first.
        const indices = Object.keys(await admin.indices.get({ index: `${prefix}*`, expand_wildcards: "all", allow_no_indices: true }));
        if (indices.length > 0) await admin.indices.delete({ index: indices.join(",") });
        const templates = await admin.indices.getIndexTemplate({ name: `${prefix}*` }).catch(() => ({ index_templates: [] }));
        for (const { name } of templates.index_templates) await admin.indices.deleteIndexTemplate({ name });
      } finally {
        await admin.close();
        await client.close().catch(() => undefined);
      }
    },
  };
}
