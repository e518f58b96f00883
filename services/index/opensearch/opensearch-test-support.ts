// Per-suite OpenSearch isolation for tests: every factory call gets its own prefix for indices and
// search pipelines, and cleanup deletes everything under it (indices, aliases, the template, the
// pipelines) with a separate client, so a test that closed the engine's client can still clean up.
import { randomUUID } from "node:crypto";
import { Client } from "@opensearch-project/opensearch";

export interface OpenSearchTestSpace {
  client: Client;
  prefix: string;
  cleanup(): Promise<void>;
}

export function openSearchTestSpace(url: string): OpenSearchTestSpace {
  const prefix = `quarry-test-${randomUUID().replaceAll("-", "").slice(0, 12)}-`;
  const client = new Client({ node: url });
  return {
    client,
    prefix,
    async cleanup() {
      const admin = new Client({ node: url });
      try {
        await admin.indices.delete({ index: `${prefix}*`, expand_wildcards: "all", ignore_unavailable: true, allow_no_indices: true });
        await admin.indices.deleteIndexTemplate({ name: `${prefix}*` }).catch(() => undefined);
        // 404 when the suite never made a pipeline.
        await admin.searchPipeline.delete({ id: `${prefix}*` }).catch(() => undefined);
      } finally {
        await admin.close();
        await client.close().catch(() => undefined);
      }
    },
  };
}
