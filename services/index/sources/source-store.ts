// Where sources and their cursors are kept: beside the catalog, in the same backend (the index's
// SQLite file, or <prefix>-sources on the search engine). The store knows a source's id, its base
// and its name (unique in the base); the rest (kind, settings, tags, last sync) is a JSON document
// kept as given, like an assistant's. Each source's cursor is one record per item.
// Implementations run testing/source-store.contract.ts.
import type { JsonObject } from "../../../lib/domain.ts";

export interface StoredSource {
  id: string;
  knowledgeBaseId: string;
  name: string;
  /** The whole source as protobuf JSON. */
  body: JsonObject;
}

export interface StoredSourceItem {
  itemId: string;
  changeToken: string;
  contentHash: string;
  documentId: string;
  fileName: string;
}

export interface SourceStore {
  /** Creates or replaces by id; AlreadyExistsError when another source of the base has the name. */
  save(source: StoredSource): Promise<StoredSource>;
  /** By id; NotFoundError. */
  get(id: string): Promise<StoredSource>;
  /** A base's sources (every base's when undefined), by name. */
  list(knowledgeBaseId?: string): Promise<StoredSource[]>;
  /** The source and its cursor; NotFoundError. */
  delete(id: string): Promise<void>;
  items(sourceId: string): Promise<StoredSourceItem[]>;
  saveItem(sourceId: string, item: StoredSourceItem): Promise<void>;
  /** Absent already: nothing to do. */
  deleteItem(sourceId: string, itemId: string): Promise<void>;
}
