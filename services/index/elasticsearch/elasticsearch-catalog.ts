// The catalog on Elasticsearch: the shared steps of document-store-catalog.ts over the
// Elasticsearch client (elasticsearch-document-store.ts).
import type { Client } from "@elastic/elasticsearch";
import { DocumentStoreCatalog, type DocumentStoreCatalogOptions } from "../document-store/document-store-catalog.ts";
import { ElasticsearchDocumentStore } from "./elasticsearch-document-store.ts";

export type ElasticsearchCatalogOptions = DocumentStoreCatalogOptions;

export class ElasticsearchCatalog extends DocumentStoreCatalog {
  constructor(client: Client, options: ElasticsearchCatalogOptions = {}) {
    super(new ElasticsearchDocumentStore(client), options);
  }
}
