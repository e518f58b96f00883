import { describeRecordStoresContract } from "../testing/conversation-store.contract.ts";
import { SqliteAssistantStore } from "./sqlite-assistant-store.ts";
import { SqliteConversationStore } from "./sqlite-conversation-store.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";

describeRecordStoresContract("SQLite", async () => {
  const { db, cleanup } = openTestDatabase();
  return { assistants: new SqliteAssistantStore(db), conversations: new SqliteConversationStore(db), cleanup };
});
