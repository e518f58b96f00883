// A throwaway index database under the OS temp folder for tests; cleanup closes and removes it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type SqliteDatabase } from "../sqlite/open-database.ts";

export function openTestDatabase(): { db: SqliteDatabase; file: string; cleanup(): Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), "quarry-index-"));
  const file = join(dir, "index.sqlite");
  const db = openDatabase(file);
  return {
    db,
    file,
    async cleanup() {
      if (db.open) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
