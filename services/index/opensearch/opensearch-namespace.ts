// Everything Quarry creates in OpenSearch is named under one prefix (QUARRY_OPENSEARCH_PREFIX):
// indices and aliases, the index template, the search pipelines. Removing a deployment, an
// evaluation run or a test run is deleting that namespace.
import { Client } from "@opensearch-project/opensearch";

/** Deletes the indices, index templates and search pipelines whose names start with prefix. */
export async function deleteOpenSearchNamespace(url: string, prefix: string): Promise<void> {
  const admin = new Client({ node: url });
  try {
    await admin.indices.delete({ index: `${prefix}*`, expand_wildcards: "all", ignore_unavailable: true, allow_no_indices: true });
    // 404 when nothing of that kind was made.
    await admin.indices.deleteIndexTemplate({ name: `${prefix}*` }).catch(() => undefined);
    await admin.searchPipeline.delete({ id: `${prefix}*` }).catch(() => undefined);
  } finally {
    await admin.close();
  }
}
