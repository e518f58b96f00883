// The OpenSearch client behind document-store-port.ts: request bodies go in `{ body }`, responses
// come back as `{ body }`, and deleting or updating by query are the engine's own
// _delete_by_query / _update_by_query.
import type { Client } from "@opensearch-project/opensearch";
import type { VersionedSource } from "../document-store/catalog-documents.ts";
import { failedItem, fieldSizeOf, fieldSizeRequest, landedOnEarlierTry, putParams, type BulkItemResult, type DocumentStorePort, type MultiSearchItem, type PutOptions, type SearchResult, type StoredHit, type WriteOptions } from "../document-store/document-store-port.ts";
import type { ChunkSource } from "../document-store/search-documents.ts";
import { openSearchErrors } from "./opensearch-errors.ts";

type Body = Record<string, unknown>;

export class OpenSearchDocumentStore implements DocumentStorePort {
  readonly engine = "OpenSearch";
  readonly errors = openSearchErrors;

  constructor(private readonly client: Client) {}

  async createIndex(index: string, body: Body): Promise<void> {
    await this.client.indices.create({ index, body });
  }

  async putIndexTemplate(name: string, body: Body): Promise<void> {
    await this.client.indices.putIndexTemplate({ name, body: body as never });
  }

  async aliasIndices(alias: string): Promise<string[]> {
    const { body } = await this.client.indices.getAlias({ name: alias });
    return Object.keys(body as Body);
  }

  async deleteIndices(indices: string[]): Promise<void> {
    await this.client.indices.delete({ index: indices.join(",") });
  }

  async swapAlias(alias: string, remove: string[], add: string): Promise<void> {
    await this.client.indices.updateAliases({
      body: { actions: [...remove.map((index) => ({ remove: { index, alias } })), { add: { index: add, alias } }] },
    });
  }

  async putMapping(index: string, properties: Body): Promise<void> {
    await this.client.indices.putMapping({ index, body: { properties } as never });
  }

  async mappingMeta(index: string): Promise<Body | undefined> {
    const { body } = await this.client.indices.getMapping({ index });
    return Object.values(body as Record<string, { mappings?: { _meta?: Body } }>)[0]?.mappings?._meta;
  }

  async refresh(index: string): Promise<void> {
    await this.client.indices.refresh({ index });
  }

  async get<T>(index: string, id: string, sourceIncludes?: string[]): Promise<VersionedSource<T> | undefined> {
    const { body } = await this.client.get({ index, id, ...(sourceIncludes ? { _source_includes: sourceIncludes } : {}) });
    const result = body as { found: boolean; _source?: T; _seq_no?: number; _primary_term?: number };
    if (!result.found || !result._source) return undefined;
    return { source: result._source, seqNo: result._seq_no!, primaryTerm: result._primary_term! };
  }

  async create(index: string, id: string, source: object, options: { refresh: boolean } = { refresh: true }): Promise<void> {
    try {
      await this.client.create({ index, id, refresh: options.refresh, body: source as Body });
    } catch (error) {
      if (this.errors.isResponseError(error, 409) && (await landedOnEarlierTry(this, error, index, id, source))) return;
      throw error;
    }
  }

  async put(index: string, id: string, source: object, options: PutOptions): Promise<void> {
    try {
      await this.client.index({ index, id, body: source as Body, ...putParams(options) });
    } catch (error) {
      if (options.ifUnchanged && this.errors.isResponseError(error, 409) && (await landedOnEarlierTry(this, error, index, id, source))) return;
      throw error;
    }
  }

  async delete(index: string, id: string): Promise<void> {
    await this.client.delete({ index, id, refresh: true });
  }

  async fieldSize(index: string, field: string): Promise<{ records: number; terms: number }> {
    const { body } = await this.client.termvectors({ index, body: fieldSizeRequest(field) as never });
    return fieldSizeOf(body, field);
  }

  async search<T>(index: string, body: Body, options: { ignoreUnavailable?: boolean } = {}): Promise<SearchResult<T>> {
    const { body: result } = await this.client.search({
      index,
      ...(options.ignoreUnavailable ? { ignore_unavailable: true, allow_no_indices: true } : {}),
      body: body as never,
    });
    const response = result as unknown as { hits: { hits: StoredHit<T>[] }; aggregations?: unknown };
    return { hits: response.hits.hits, aggregations: response.aggregations };
  }

  async multiSearch(index: string, bodies: Body[]): Promise<MultiSearchItem[]> {
    const { body } = await this.client.msearch({ body: bodies.flatMap((search) => [{ index }, search]) as never });
    const responses = (body as unknown as { responses: { hits: { hits: StoredHit<ChunkSource>[] }; error?: MultiSearchItem & object; status?: number }[] }).responses;
    return responses.map((response) =>
      response.error ? ({ error: response.error, status: response.status } as MultiSearchItem) : { hits: response.hits.hits },
    );
  }

  async bulk(what: string, operations: Body[], options: WriteOptions): Promise<void> {
    const failed = failedItem(await this.bulkItems(operations, options));
    if (failed) throw this.errors.itemError(what, failed.status, failed.error);
  }

  async bulkItems(operations: Body[], options: WriteOptions): Promise<BulkItemResult[]> {
    if (operations.length === 0) return [];
    const { body } = await this.client.bulk({ body: operations, require_alias: options.requireAlias ?? false, refresh: options.refresh });
    return (body as { items: Record<string, BulkItemResult>[] }).items.map((item) => Object.values(item)[0]);
  }

  async deleteWhere(what: string, index: string, query: Body, options: WriteOptions & { alsoIds?: string[] }): Promise<void> {
    await this.client.deleteByQuery({ index, conflicts: "proceed", refresh: options.refresh, body: { query } });
    const deletes = (options.alsoIds ?? []).map((id) => ({ delete: { _index: index, _id: id } }));
    await this.bulk(what, deletes, options);
  }

  async updateWhere(_what: string, index: string, query: Body, fields: Body, options: WriteOptions): Promise<void> {
    await this.client.updateByQuery({
      index,
      conflicts: "proceed",
      refresh: options.refresh,
      body: { query, script: { source: "ctx._source.putAll(params.fields)", lang: "painless", params: { fields } } },
    });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
