// Per-suite OpenSearch isolation for tests: every factory call gets its own prefix for indices and
// search pipelines, and cleanup deletes everything under it (indices, aliases, the template, the
// pipelines) with a separate client, so a test that closed the engine's client can still clean up.
import { deleteOpenSearchNamespace } from "../opensearch/opensearch-namespace.ts";
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
      try {
        await deleteOpenSearchNamespace(url, prefix);
      } finally {
        await client.close().catch(() => undefined);
      }
    },
  };
}
