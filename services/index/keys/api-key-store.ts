// Where API keys are kept: next to the catalog, in the same backend (the index's SQLite file, or
// the catalog's search engine). Only the SHA-256 of a key is stored (see lib/auth/api-key.ts).
// Implementations: SQLite and the document stores (OpenSearch, Elasticsearch); all run
// testing/api-key-store.contract.ts.
import type { ApiKeyRecord } from "../../../lib/auth/api-key.ts";

export interface StoredApiKey extends ApiKeyRecord {
  /** Hex SHA-256 of the whole key. */
  keyHash: string;
}

export interface ApiKeyStore {
  /** Throws AlreadyExistsError when the name is taken. */
  create(key: StoredApiKey): Promise<ApiKeyRecord>;
  /** Every key, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
  /** The key with this id, hash included, or undefined. */
  find(id: string): Promise<StoredApiKey | undefined>;
  /** Deletes the key named by id or name; throws NotFoundError. */
  revoke(idOrName: string): Promise<ApiKeyRecord>;
}
