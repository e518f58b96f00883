// The two primitives the Elasticsearch backend builds its multi-record writes from, because the
// Maven integ-test distribution has no reindex module (_delete_by_query, _update_by_query): collect
// the ids a query matches with a scroll, then write them with _bulk.
import type { Client } from "@elastic/elasticsearch";
import type { BulkItemResult } from "../document-store/document-store-port.ts";

// Ids collected per scroll page.
const ID_PAGE_SIZE = 1_000;

/** Ids of every record matching query as of the last refresh (scrolled, so any number of them). */
export async function matchingIds(client: Client, index: string, query: Record<string, unknown>): Promise<string[]> {
  const ids: string[] = [];
  // The helper clears the scroll context itself once the last page is read.
  for await (const page of client.helpers.scrollSearch({ index, query, _source: false, size: ID_PAGE_SIZE, sort: ["_doc"] })) {
    for (const hit of page.body.hits.hits) ids.push(hit._id!);
  }
  return ids;
}

export interface BulkOptions {
  refresh: boolean;
  /** Writes go through an alias only, so a write to a dropped knowledge base never auto-creates an index. */
  requireAlias: boolean;
}

/** One _bulk request, answering each item's outcome in order (only a failed request throws). */
export async function bulkItems(client: Client, operations: Record<string, unknown>[], options: BulkOptions): Promise<BulkItemResult[]> {
  if (operations.length === 0) return [];
  const result = await client.bulk({ operations, require_alias: options.requireAlias, refresh: options.refresh });
  return result.items.map((item) => Object.values(item)[0] as BulkItemResult);
}
