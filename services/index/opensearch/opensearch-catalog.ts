// The distributed catalog on OpenSearch: the shared steps of document-store-catalog.ts over the
// OpenSearch client (opensearch-document-store.ts).
import type { Client } from "@opensearch-project/opensearch";
import { DocumentStoreCatalog, type DocumentStoreCatalogOptions } from "../document-store/document-store-catalog.ts";
import { OpenSearchDocumentStore } from "./opensearch-document-store.ts";

export type OpenSearchCatalogOptions = DocumentStoreCatalogOptions;

export class OpenSearchCatalog extends DocumentStoreCatalog {
  constructor(client: Client, options: OpenSearchCatalogOptions = {}) {
    super(new OpenSearchDocumentStore(client), options);
  }
}
