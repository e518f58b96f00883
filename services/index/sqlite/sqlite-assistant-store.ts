// Assistants in the index's SQLite file. Like the API keys, the table is created by the store, so
// an older file gains it on first open.
import { NotFoundError } from "../../../lib/errors.ts";
import type { AssistantStore, StoredAssistant } from "../assistants/assistant-store.ts";
import type { SqliteDatabase } from "./open-database.ts";
import { uniqueOrTaken, withDatabase } from "./sqlite-errors.ts";

interface AssistantRow {
  id: string;
  name: string;
  config: string;
  created_at: number;
  updated_at: number;
}

const toStored = (row: AssistantRow): StoredAssistant => ({
  id: row.id,
  name: row.name,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
  config: JSON.parse(row.config) as StoredAssistant["config"],
});

const taken = (name: string) => `an assistant named "${name}" already exists`;

export class SqliteAssistantStore implements AssistantStore {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(`CREATE TABLE IF NOT EXISTS assistants (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      config TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    )`);
  }

  async create(a: StoredAssistant): Promise<StoredAssistant> {
    return withDatabase(this.db, "create assistant", () => {
      uniqueOrTaken(taken(a.name), () =>
        this.db
          .prepare("INSERT INTO assistants (id, name, config, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
          .run(a.id, a.name, JSON.stringify(a.config), a.createdAt.getTime(), a.updatedAt.getTime()),
      );
      return this.row(a.id)!;
    });
  }

  async get(idOrName: string): Promise<StoredAssistant> {
    return withDatabase(this.db, "get assistant", () => {
      const row = (this.db.prepare("SELECT * FROM assistants WHERE id = ?").get(idOrName) ??
        this.db.prepare("SELECT * FROM assistants WHERE name = ?").get(idOrName)) as AssistantRow | undefined;
      if (!row) throw new NotFoundError(`no assistant has the id or name ${idOrName}`);
      return toStored(row);
    });
  }

  async list(): Promise<StoredAssistant[]> {
    return withDatabase(this.db, "list assistants", () => (this.db.prepare("SELECT * FROM assistants ORDER BY name").all() as AssistantRow[]).map(toStored));
  }

  async update(id: string, next: Pick<StoredAssistant, "name" | "config" | "updatedAt">): Promise<StoredAssistant> {
    return withDatabase(this.db, "update assistant", () => {
      const changed = uniqueOrTaken(
        taken(next.name),
        () => this.db.prepare("UPDATE assistants SET name = ?, config = ?, updated_at = ? WHERE id = ?").run(next.name, JSON.stringify(next.config), next.updatedAt.getTime(), id).changes,
      );
      if (changed === 0) throw new NotFoundError(`no assistant has the id ${id}`);
      return this.row(id)!;
    });
  }

  async delete(idOrName: string): Promise<StoredAssistant> {
    return withDatabase(this.db, "delete assistant", () => {
      // An id first: a name that looks like another assistant's id must not delete that one.
      const row =
        (this.db.prepare("DELETE FROM assistants WHERE id = ? RETURNING *").get(idOrName) as AssistantRow | undefined) ??
        (this.db.prepare("DELETE FROM assistants WHERE name = ? RETURNING *").get(idOrName) as AssistantRow | undefined);
      if (!row) throw new NotFoundError(`no assistant has the id or name ${idOrName}`);
      return toStored(row);
    });
  }

  private row(id: string): StoredAssistant | undefined {
    const row = this.db.prepare("SELECT * FROM assistants WHERE id = ?").get(id) as AssistantRow | undefined;
    return row && toStored(row);
  }
}
