// What a test of the gateway's upload path stands on: the index's SQLite catalog with one knowledge
// base ("handbook"), a SQLite bus and a temp folder, and a cleanup that removes them all.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteEventBus } from "../../lib/bus/sqlite-event-bus.ts";
import { SqliteCatalog } from "../../services/index/index.ts";
import { openTestDatabase } from "../../services/index/testing/sqlite-test-database.ts";

export async function uploadGround(cleanups: (() => Promise<void>)[]) {
  const database = openTestDatabase();
  const catalog = new SqliteCatalog(database.db);
  const dir = await mkdtemp(join(tmpdir(), "quarry-upload-"));
  const bus = new SqliteEventBus(join(dir, "bus.db"), { pollIntervalMs: 10 });
  cleanups.push(async () => {
    await bus.close({ graceMs: 0 });
    await database.cleanup();
    await rm(dir, { recursive: true, force: true });
  });
  const kb = await catalog.createKnowledgeBase({
    name: "handbook",
    description: "",
    embeddingModel: "test-model",
    embeddingDimension: 4,
    chunking: { strategy: "recursive", chunkSize: 200, chunkOverlap: 20, separators: [] },
  });
  return { catalog, bus, dir, kb };
}
