// The client calls the distributed catalog and search engine are built from, for the engines that
// speak the OpenSearch / Elasticsearch document API. The steps (document-store-catalog.ts,
// document-store-engine.ts) are written once against this port; each backend adapts its own client
// to it: OpenSearch wraps request bodies in `{ body }`, Elasticsearch takes typed top-level
// parameters and, lacking the reindex module, deletes and updates by query with a scroll + _bulk.
import { isDeepStrictEqual } from "node:util";
import { UnavailableError } from "../../../lib/errors.ts";
import type { VersionedSource } from "./catalog-documents.ts";
import type { EngineErrors } from "./engine-errors.ts";
import type { ChunkSource } from "./search-documents.ts";

export interface StoredHit<T> {
  _id: string;
  _index: string;
  _score?: number | null;
  _source?: T;
  matched_queries?: Record<string, number>;
  /** The hit's sort values, when the search sorted (what search_after pages on). */
  sort?: unknown[];
}

export interface SearchResult<T> {
  hits: StoredHit<T>[];
  aggregations?: unknown;
}

/** One search of an _msearch: its hits, or why it failed (the other searches may still have answered). */
export type MultiSearchItem = { hits: StoredHit<ChunkSource>[] } | { error: { type?: string } & Record<string, unknown>; status?: number };

export interface WriteOptions {
  refresh: boolean;
  /** Writes go through an alias only, so a write to a dropped knowledge base never auto-creates an index. */
  requireAlias?: boolean;
}

export interface PutOptions extends WriteOptions {
  ifUnchanged?: VersionedSource<unknown>;
}

/** What one item of a _bulk request came to. */
export interface BulkItemResult {
  status: number;
  /** The engine's error, when the item failed. */
  error?: unknown;
  /** The engine's result word ("created", "updated", "deleted", "not_found"…). */
  result?: string;
}

/** The first item that really failed: deleting a record already gone counts as done. */
export function failedItem(items: readonly BulkItemResult[]): BulkItemResult | undefined {
  return items.find((item) => item.error !== undefined && !isAlreadyGone(item));
}

export function isAlreadyGone(item: BulkItemResult): boolean {
  return item.status === 404 && item.result === "not_found";
}

/** The URL parameters of a put, which both clients name alike. */
export function putParams(options: PutOptions): Record<string, unknown> {
  return {
    refresh: options.refresh,
    ...(options.requireAlias === undefined ? {} : { require_alias: options.requireAlias }),
    ...(options.ifUnchanged ? { if_seq_no: options.ifUnchanged.seqNo, if_primary_term: options.ifUnchanged.primaryTerm } : {}),
  };
}

/**
 * Whether a write the engine refused with 409 had in fact landed on an earlier try. The engines'
 * clients send a request again after a timeout or a dropped connection (a node cut off mid-call);
 * when the first try had reached the primary, the second finds that try's record (a create) or a
 * newer sequence number (a put ifUnchanged) and is refused. Only a request the client sent more
 * than once can have been refused by its own earlier try: without that, an identical record is a
 * concurrent writer's (two turns of a conversation computing the same next record), a real
 * conflict. After a retry, a record that holds exactly what was sent is taken as the earlier try's.
 */
export async function landedOnEarlierTry(store: Pick<DocumentStorePort, "get">, refused: unknown, index: string, id: string, sent: object): Promise<boolean> {
  if (!sentMoreThanOnce(refused)) return false;
  const stored = await store.get(index, id).catch(() => undefined);
  // Through JSON, as the engine holds it (undefined fields dropped, dates as strings).
  return stored !== undefined && isDeepStrictEqual(stored.source, JSON.parse(JSON.stringify(sent)));
}

/** Both clients' response errors carry the request's diagnostics, with the retries it took. */
function sentMoreThanOnce(error: unknown): boolean {
  const attempts = (error as { meta?: { meta?: { attempts?: unknown } } } | undefined)?.meta?.meta?.attempts;
  return typeof attempts === "number" && attempts > 0;
}

export interface DocumentStorePort {
  /** The engine's name, for messages. */
  readonly engine: string;
  readonly errors: EngineErrors<Error>;

  /** Throws resource_already_exists_exception when the index exists. */
  createIndex(index: string, body: { settings?: Record<string, unknown>; mappings: Record<string, unknown>; aliases?: Record<string, unknown> }): Promise<void>;
  putIndexTemplate(name: string, body: { index_patterns: string[]; template: Record<string, unknown> }): Promise<void>;
  /** The concrete indices behind an alias; a missing alias throws a 404. */
  aliasIndices(alias: string): Promise<string[]>;
  deleteIndices(indices: string[]): Promise<void>;
  /** Points the alias at `add` instead of `remove` in one atomic aliases update. */
  swapAlias(alias: string, remove: string[], add: string): Promise<void>;
  /** Adds fields to an existing index's mapping (a strict mapping refuses records with unknown fields). */
  putMapping(index: string, properties: Record<string, unknown>): Promise<void>;
  /** The `_meta` of the first index's mapping; a missing index throws. */
  mappingMeta(index: string): Promise<Record<string, unknown> | undefined>;
  refresh(index: string): Promise<void>;

  /** A real-time read by id with its version numbers; a missing record throws the client's 404 (findRecord reads it as absent). */
  get<T>(index: string, id: string, sourceIncludes?: string[]): Promise<VersionedSource<T> | undefined>;
  /** Creates the record (refreshed, unless told otherwise) only if it is absent; a present one throws a 409. */
  create(index: string, id: string, source: object, options?: { refresh: boolean }): Promise<void>;
  /** Writes the record; with ifUnchanged only if nobody changed it since that read (a 409 otherwise). */
  put(index: string, id: string, source: object, options: PutOptions): Promise<void>;
  /** Deletes the record (refreshed); a missing record throws the client's 404 (deleteRecord reads it as false). */
  delete(index: string, id: string): Promise<void>;
  /**
   * A text field's size on the index's shard an artificial document routes to (the whole index when
   * it has one shard, as chunk indices do by default): records that have the field and the terms
   * they hold in all — what the engine's BM25 takes its average field length from.
   */
  fieldSize(index: string, field: string): Promise<{ records: number; terms: number }>;
  search<T>(index: string, body: Record<string, unknown>, options?: { ignoreUnavailable?: boolean }): Promise<SearchResult<T>>;
  /** Runs the searches in one round trip. */
  multiSearch(index: string, bodies: Record<string, unknown>[]): Promise<MultiSearchItem[]>;
  /** One _bulk request that fails as a whole when any item failed. */
  bulk(what: string, operations: Record<string, unknown>[], options: WriteOptions): Promise<void>;
  /** One _bulk request, answering each item's outcome in order (only a failed request throws). */
  bulkItems(operations: Record<string, unknown>[], options: WriteOptions): Promise<BulkItemResult[]>;
  /**
   * Deletes the records query matches as of the last refresh, then the records alsoIds names even if
   * no refresh shows them yet (already gone counts as done).
   */
  deleteWhere(what: string, index: string, query: Record<string, unknown>, options: WriteOptions & { alsoIds?: string[] }): Promise<void>;
  /** Sets fields on the records query matches as of the last refresh. */
  updateWhere(what: string, index: string, query: Record<string, unknown>, fields: Record<string, unknown>, options: WriteOptions): Promise<void>;
  close(): Promise<void>;
}

/** The record by id, or undefined when there is none (a missing index still throws). */
export async function findRecord<T>(store: DocumentStorePort, index: string, id: string, sourceIncludes?: string[]): Promise<VersionedSource<T> | undefined> {
  try {
    return await store.get<T>(index, id, sourceIncludes);
  } catch (error) {
    if (store.errors.isResponseError(error, 404) && store.errors.errorType(error) !== "index_not_found_exception") return undefined;
    throw error;
  }
}

/** Deletes the record by id; false when there was none. */
export async function deleteRecord(store: DocumentStorePort, index: string, id: string): Promise<boolean> {
  try {
    await store.delete(index, id);
    return true;
  } catch (error) {
    if (store.errors.isResponseError(error, 404)) return false;
    throw error;
  }
}

/**
 * Runs one store call: the index made first, and the engine's failure turned into the domain's
 * (an engine error that maps to no domain error is unavailable, naming what failed).
 */
export async function callStore<T>(store: DocumentStorePort, ensureIndex: () => Promise<void>, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    await ensureIndex();
    return await fn();
  } catch (error) {
    const domain = store.errors.toDomainError(error, what);
    throw domain instanceof Error ? domain : new UnavailableError(`${what}: ${String(domain)}`);
  }
}

/**
 * Creates the index on first use and remembers that it exists (created now or by anyone before);
 * a failure is forgotten so the next call tries again.
 */
export function indexCreator(store: DocumentStorePort, index: string, body: () => Parameters<DocumentStorePort["createIndex"]>[1]): () => Promise<void> {
  let ready: Promise<void> | undefined;
  return () =>
    (ready ??= store.createIndex(index, body()).then(
      () => undefined,
      (error: unknown) => {
        if (store.errors.errorType(error) === "resource_already_exists_exception") return;
        ready = undefined;
        throw error;
      },
    ));
}

/**
 * The _termvectors request for a field's statistics: an artificial one-word document (no record is
 * read or written), field statistics only.
 */
export function fieldSizeRequest(field: string): { doc: Record<string, string>; fields: string[]; field_statistics: true; term_statistics: false; positions: false; offsets: false; payloads: false } {
  return { doc: { [field]: "quarry" }, fields: [field], field_statistics: true, term_statistics: false, positions: false, offsets: false, payloads: false };
}

/** The field's size from a _termvectors response; an index where no record has the field has none. */
export function fieldSizeOf(response: unknown, field: string): { records: number; terms: number } {
  const statistics = (response as { term_vectors?: Record<string, { field_statistics?: { doc_count?: number; sum_ttf?: number } }> }).term_vectors?.[field]?.field_statistics;
  return { records: statistics?.doc_count ?? 0, terms: statistics?.sum_ttf ?? 0 };
}
