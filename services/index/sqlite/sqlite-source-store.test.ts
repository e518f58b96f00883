import { describeSourceStoreContract } from "../testing/source-store.contract.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";
import { SqliteSourceStore } from "./sqlite-source-store.ts";

describeSourceStoreContract("SQLite", async () => {
  const { db, cleanup } = openTestDatabase();
  return { sources: new SqliteSourceStore(db), cleanup };
});
