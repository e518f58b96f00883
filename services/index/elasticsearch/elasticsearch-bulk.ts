// The two primitives the Elasticsearch backend builds its multi-record writes from, because the
// Maven integ-test distribution has no reindex module (_delete_by_query, _update_by_query): collect
// the ids a query matches with a scroll, then write them with _bulk.
import type { Client } from "@elastic/elasticsearch";
import { itemError } from "./elasticsearch-errors.ts";

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

/** One _bulk request that fails as a whole when any item failed. Deleting a record already gone counts as done. */
export async function bulkWrite(client: Client, what: string, operations: Record<string, unknown>[], options: BulkOptions): Promise<void> {
  if (operations.length === 0) return;
  const result = await client.bulk({ operations, require_alias: options.requireAlias, refresh: options.refresh });
  if (!result.errors) return;
  const failed = result.items.map((item) => Object.values(item)[0]).find((item) => item.error && !(item.status === 404 && item.result === "not_found"));
  if (failed) throw itemError(what, failed.status, failed.error);
}
