import { describeApiKeyStoreContract } from "../testing/api-key-store.contract.ts";
import { SqliteApiKeyStore } from "./sqlite-api-key-store.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";

describeApiKeyStoreContract("SQLite", async () => {
  const { db, cleanup } = openTestDatabase();
  return { store: new SqliteApiKeyStore(db), cleanup };
});
