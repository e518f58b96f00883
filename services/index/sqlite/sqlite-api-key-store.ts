// API keys in the index's SQLite file. The table is created here rather than by the catalog's
// migrations: keys are their own store, and an older file gains the table on first open.
import type { ApiKeyRecord, ApiKeyRole } from "../../../lib/auth/api-key.ts";
import { NotFoundError } from "../../../lib/errors.ts";
import type { ApiKeyStore, StoredApiKey } from "../keys/api-key-store.ts";
import type { SqliteDatabase } from "./open-database.ts";
import { uniqueOrTaken, withDatabase } from "./sqlite-errors.ts";

interface ApiKeyRow {
  id: string;
  name: string;
  role: ApiKeyRole;
  knowledge_base_ids: string;
  key_hash: string;
  created_at: number;
}

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  role: row.role,
  knowledgeBaseIds: JSON.parse(row.knowledge_base_ids) as string[],
  createdAt: new Date(row.created_at),
});

export class SqliteApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(`CREATE TABLE IF NOT EXISTS api_keys (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      role TEXT NOT NULL,
      knowledge_base_ids TEXT NOT NULL,
      key_hash TEXT NOT NULL,
      created_at INTEGER NOT NULL
    )`);
  }

  async create(key: StoredApiKey): Promise<ApiKeyRecord> {
    return withDatabase(this.db, "create API key", () => {
      uniqueOrTaken(`an API key named "${key.name}" already exists`, () =>
        this.db
          .prepare("INSERT INTO api_keys (id, name, role, knowledge_base_ids, key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)")
          .run(key.id, key.name, key.role, JSON.stringify(key.knowledgeBaseIds), key.keyHash, key.createdAt.getTime()),
      );
      const { keyHash: _, ...record } = key;
      return record;
    });
  }

  async list(): Promise<ApiKeyRecord[]> {
    return withDatabase(this.db, "list API keys", () =>
      (this.db.prepare("SELECT * FROM api_keys ORDER BY created_at, name").all() as ApiKeyRow[]).map(toRecord),
    );
  }

  async find(id: string): Promise<StoredApiKey | undefined> {
    return withDatabase(this.db, "find API key", () => {
      const row = this.db.prepare("SELECT * FROM api_keys WHERE id = ?").get(id) as ApiKeyRow | undefined;
      return row && { ...toRecord(row), keyHash: row.key_hash };
    });
  }

  async revoke(idOrName: string): Promise<ApiKeyRecord> {
    return withDatabase(this.db, "revoke API key", () => {
      const row = this.db.prepare("DELETE FROM api_keys WHERE id = ? OR name = ? RETURNING *").get(idOrName, idOrName) as ApiKeyRow | undefined;
      if (!row) throw new NotFoundError(`no API key has the id or name ${idOrName}`);
      return toRecord(row);
    });
  }
}
