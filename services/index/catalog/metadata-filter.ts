// A search restricted by document metadata. The metadata lives with each document in the catalog
// (the upload header's map), not in the chunk records, so the filter is resolved there into the
// document ids the engines already filter on — the same on SQLite, OpenSearch and Elasticsearch, and
// a document's new metadata applies at once, without re-indexing its chunks.
import type { Catalog } from "./catalog.ts";

/**
 * The documents of these knowledge bases whose metadata has every given key/value pair, narrowed
 * to `documentIds` when that is not empty. Undefined when there is no filter (search everything).
 */
export async function documentsMatching(
  catalog: Pick<Catalog, "listDocuments">,
  knowledgeBaseIds: string[],
  metadataEquals: Record<string, string>,
  documentIds: string[],
): Promise<string[] | undefined> {
  const wanted = Object.entries(metadataEquals);
  if (wanted.length === 0) return undefined;
  const only = documentIds.length > 0 ? new Set(documentIds) : undefined;
  const lists = await Promise.all(knowledgeBaseIds.map((id) => catalog.listDocuments(id)));
  return lists
    .flat()
    .filter((doc) => (!only || only.has(doc.id)) && wanted.every(([key, value]) => doc.metadata[key] === value))
    .map((doc) => doc.id);
}
