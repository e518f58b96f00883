// Sources and their cursors in the index's SQLite file; the tables are created by the store, so an
// older file gains them on first open.
import { NotFoundError } from "../../../lib/errors.ts";
import type { SourceStore, StoredSource, StoredSourceItem } from "../sources/source-store.ts";
import type { SqliteDatabase } from "./open-database.ts";
import { uniqueOrTaken, withDatabase } from "./sqlite-errors.ts";

interface SourceRow {
  id: string;
  knowledge_base_id: string;
  name: string;
  body: string;
}

interface ItemRow {
  item_id: string;
  change_token: string;
  content_hash: string;
  document_id: string;
  file_name: string;
}

const toStored = (row: SourceRow): StoredSource => ({ id: row.id, knowledgeBaseId: row.knowledge_base_id, name: row.name, body: JSON.parse(row.body) as StoredSource["body"] });

export class SqliteSourceStore implements SourceStore {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(`CREATE TABLE IF NOT EXISTS sources (
      id TEXT PRIMARY KEY,
      knowledge_base_id TEXT NOT NULL,
      name TEXT NOT NULL,
      body TEXT NOT NULL,
      UNIQUE (knowledge_base_id, name)
    );
    CREATE TABLE IF NOT EXISTS source_items (
      source_id TEXT NOT NULL,
      item_id TEXT NOT NULL,
      change_token TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      document_id TEXT NOT NULL,
      file_name TEXT NOT NULL,
      PRIMARY KEY (source_id, item_id)
    )`);
  }

  async save(source: StoredSource): Promise<StoredSource> {
    return withDatabase(this.db, "save source", () => {
      uniqueOrTaken(`a source named "${source.name}" already exists in this knowledge base`, () =>
        this.db
          .prepare(
            `INSERT INTO sources (id, knowledge_base_id, name, body) VALUES (?, ?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, body = excluded.body`,
          )
          .run(source.id, source.knowledgeBaseId, source.name, JSON.stringify(source.body)),
      );
      return source;
    });
  }

  async get(id: string): Promise<StoredSource> {
    return withDatabase(this.db, "get source", () => {
      const row = this.db.prepare("SELECT * FROM sources WHERE id = ?").get(id) as SourceRow | undefined;
      if (!row) throw new NotFoundError(`no source has the id ${id}`);
      return toStored(row);
    });
  }

  async list(knowledgeBaseId?: string): Promise<StoredSource[]> {
    return withDatabase(this.db, "list sources", () => {
      const rows = knowledgeBaseId
        ? this.db.prepare("SELECT * FROM sources WHERE knowledge_base_id = ? ORDER BY name").all(knowledgeBaseId)
        : this.db.prepare("SELECT * FROM sources ORDER BY knowledge_base_id, name").all();
      return (rows as SourceRow[]).map(toStored);
    });
  }

  async delete(id: string): Promise<void> {
    withDatabase(this.db, "delete source", () =>
      this.db.transaction(() => {
        if (this.db.prepare("DELETE FROM sources WHERE id = ?").run(id).changes === 0) throw new NotFoundError(`no source has the id ${id}`);
        this.db.prepare("DELETE FROM source_items WHERE source_id = ?").run(id);
      })(),
    );
  }

  async items(sourceId: string): Promise<StoredSourceItem[]> {
    return withDatabase(this.db, "list source items", () =>
      (this.db.prepare("SELECT * FROM source_items WHERE source_id = ? ORDER BY item_id").all(sourceId) as ItemRow[]).map((row) => ({
        itemId: row.item_id,
        changeToken: row.change_token,
        contentHash: row.content_hash,
        documentId: row.document_id,
        fileName: row.file_name,
      })),
    );
  }

  async saveItem(sourceId: string, item: StoredSourceItem): Promise<void> {
    withDatabase(this.db, "save source item", () =>
      this.db
        .prepare(
          `INSERT INTO source_items (source_id, item_id, change_token, content_hash, document_id, file_name) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (source_id, item_id) DO UPDATE SET change_token = excluded.change_token, content_hash = excluded.content_hash,
             document_id = excluded.document_id, file_name = excluded.file_name`,
        )
        .run(sourceId, item.itemId, item.changeToken, item.contentHash, item.documentId, item.fileName),
    );
  }

  async deleteItem(sourceId: string, itemId: string): Promise<void> {
    withDatabase(this.db, "delete source item", () => this.db.prepare("DELETE FROM source_items WHERE source_id = ? AND item_id = ?").run(sourceId, itemId));
  }
}
