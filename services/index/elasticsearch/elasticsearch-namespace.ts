// Everything Quarry creates in Elasticsearch is named under one prefix (QUARRY_ELASTICSEARCH_PREFIX):
// indices and aliases, the index template. Removing an evaluation run or a test run is deleting that
// namespace.
import { Client } from "@elastic/elasticsearch";

/** Deletes the indices and index templates whose names start with prefix. */
export async function deleteElasticsearchNamespace(url: string, prefix: string): Promise<void> {
  const admin = new Client({ node: url });
  try {
    // Elasticsearch 8 refuses wildcard deletes (action.destructive_requires_name), so names are resolved first.
    const indices = Object.keys(await admin.indices.get({ index: `${prefix}*`, expand_wildcards: "all", allow_no_indices: true }));
    if (indices.length > 0) await admin.indices.delete({ index: indices.join(",") });
    // 404 when no template was made.
    const templates = await admin.indices.getIndexTemplate({ name: `${prefix}*` }).catch(() => ({ index_templates: [] }));
    for (const { name } of templates.index_templates) await admin.indices.deleteIndexTemplate({ name });
  } finally {
    await admin.close();
  }
}
