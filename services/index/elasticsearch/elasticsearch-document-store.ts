// The Elasticsearch client behind document-store-port.ts: typed top-level parameters instead of a
// `{ body }`, and, because the distribution Quarry runs has no reindex module (_delete_by_query,
// _update_by_query) nor lang-painless, deleting or updating by query collects the ids with a scroll
// and writes them with _bulk (elasticsearch-bulk.ts).
import type { Client } from "@elastic/elasticsearch";
import type { VersionedSource } from "../document-store/catalog-documents.ts";
import { failedItem, fieldSizeOf, fieldSizeRequest, landedOnEarlierTry, putParams, type BulkItemResult, type DocumentStorePort, type MultiSearchItem, type PutOptions, type SearchResult, type StoredHit, type WriteOptions } from "../document-store/document-store-port.ts";
import type { ChunkSource } from "../document-store/search-documents.ts";
import { bulkItems, matchingIds } from "./elasticsearch-bulk.ts";
import { elasticsearchErrors, itemError } from "./elasticsearch-errors.ts";

type Body = Record<string, unknown>;

export class ElasticsearchDocumentStore implements DocumentStorePort {
  readonly engine = "Elasticsearch";
  readonly errors = elasticsearchErrors;

  constructor(private readonly client: Client) {}

  async createIndex(index: string, body: Body): Promise<void> {
    await this.client.indices.create({ index, ...(body as object) });
  }

  async putIndexTemplate(name: string, body: Body): Promise<void> {
    await this.client.indices.putIndexTemplate({ name, ...(body as object) });
  }

  async aliasIndices(alias: string): Promise<string[]> {
    return Object.keys(await this.client.indices.getAlias({ name: alias }));
  }

  async deleteIndices(indices: string[]): Promise<void> {
    await this.client.indices.delete({ index: indices.join(",") });
  }

  async swapAlias(alias: string, remove: string[], add: string): Promise<void> {
    await this.client.indices.updateAliases({
      actions: [...remove.map((index) => ({ remove: { index, alias } })), { add: { index: add, alias } }],
    });
  }

  async putMapping(index: string, properties: Body): Promise<void> {
    await this.client.indices.putMapping({ index, properties: properties as never });
  }

  async mappingMeta(index: string): Promise<Body | undefined> {
    const mappings = await this.client.indices.getMapping({ index });
    return Object.values(mappings)[0]?.mappings?._meta;
  }

  async refresh(index: string): Promise<void> {
    await this.client.indices.refresh({ index });
  }

  async get<T>(index: string, id: string, sourceIncludes?: string[]): Promise<VersionedSource<T> | undefined> {
    const result = await this.client.get<T>({ index, id, ...(sourceIncludes ? { _source_includes: sourceIncludes } : {}) });
    if (!result.found || !result._source) return undefined;
    return { source: result._source, seqNo: result._seq_no!, primaryTerm: result._primary_term! };
  }

  async create(index: string, id: string, source: object, options: { refresh: boolean } = { refresh: true }): Promise<void> {
    try {
      await this.client.create({ index, id, refresh: options.refresh, document: source });
    } catch (error) {
      if (this.errors.isResponseError(error, 409) && (await landedOnEarlierTry(this, error, index, id, source))) return;
      throw error;
    }
  }

  async put(index: string, id: string, source: object, options: PutOptions): Promise<void> {
    try {
      await this.client.index({ index, id, document: source, ...putParams(options) });
    } catch (error) {
      if (options.ifUnchanged && this.errors.isResponseError(error, 409) && (await landedOnEarlierTry(this, error, index, id, source))) return;
      throw error;
    }
  }

  async delete(index: string, id: string): Promise<void> {
    await this.client.delete({ index, id, refresh: true });
  }

  async fieldSize(index: string, field: string): Promise<{ records: number; terms: number }> {
    return fieldSizeOf(await this.client.termvectors({ index, ...fieldSizeRequest(field) }), field);
  }

  async search<T>(index: string, body: Body, options: { ignoreUnavailable?: boolean } = {}): Promise<SearchResult<T>> {
    const result = await this.client.search<T>({
      index,
      ...(options.ignoreUnavailable ? { ignore_unavailable: true, allow_no_indices: true } : {}),
      ...(body as object),
    });
    return { hits: result.hits.hits as StoredHit<T>[], aggregations: result.aggregations };
  }

  async multiSearch(index: string, bodies: Body[]): Promise<MultiSearchItem[]> {
    const response = await this.client.msearch<ChunkSource>({ searches: bodies.flatMap((search) => [{ index }, search]) as never });
    return response.responses.map((item) =>
      "error" in item ? ({ error: item.error, status: item.status } as MultiSearchItem) : { hits: item.hits.hits as StoredHit<ChunkSource>[] },
    );
  }

  async bulk(what: string, operations: Body[], options: WriteOptions): Promise<void> {
    const failed = failedItem(await this.bulkItems(operations, options));
    if (failed) throw itemError(what, failed.status, failed.error);
  }

  async bulkItems(operations: Body[], options: WriteOptions): Promise<BulkItemResult[]> {
    return bulkItems(this.client, operations, { refresh: options.refresh, requireAlias: options.requireAlias ?? false });
  }

  async deleteWhere(what: string, index: string, query: Body, options: WriteOptions & { alsoIds?: string[] }): Promise<void> {
    const ids = new Set([...(await matchingIds(this.client, index, query)), ...(options.alsoIds ?? [])]);
    await this.writeAll(what, index, [...ids].map((id) => ({ delete: { _index: index, _id: id } })), options);
  }

  async updateWhere(what: string, index: string, query: Body, fields: Body, options: WriteOptions): Promise<void> {
    const ids = await matchingIds(this.client, index, query);
    await this.writeAll(what, index, ids.flatMap((id) => [{ update: { _index: index, _id: id } }, { doc: fields }]), options);
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  // A refresh asked for still happens when nothing matched, as _delete_by_query's would.
  private async writeAll(what: string, index: string, operations: Body[], options: WriteOptions): Promise<void> {
    if (operations.length === 0) {
      if (options.refresh) await this.refresh(index);
      return;
    }
    await this.bulk(what, operations, options);
  }
}
