import { describe, expect, it } from "vitest";
import { UnavailableError } from "../../../lib/errors.ts";
import { describeCatalogContract } from "../testing/catalog.contract.ts";
import { documentIdFor } from "../../../lib/catalog-ids.ts";
import { openDatabase } from "./open-database.ts";
import { SqliteCatalog } from "./sqlite-catalog.ts";
import { openTestDatabase } from "../testing/sqlite-test-database.ts";

describeCatalogContract("SQLite", async () => {
  const { db, cleanup } = openTestDatabase();
  return { catalog: new SqliteCatalog(db), cleanup };
});

describe("SqliteCatalog", () => {
  it("derives document ids from the knowledge base and file name", async () => {
    const { db, cleanup } = openTestDatabase();
    try {
      const catalog = new SqliteCatalog(db);
      const kb = await catalog.createKnowledgeBase({
        name: "ids",
        description: "",
        embeddingModel: "m",
        embeddingDimension: 4,
        chunking: { strategy: "recursive", chunkSize: 100, chunkOverlap: 0, separators: [] },
      });
      const { document } = await catalog.registerDocument({
        knowledgeBaseId: kb.id,
        fileName: "a.txt",
        mimeType: "text/plain",
        sizeBytes: 1,
        contentHash: "h",
        version: 1,
        metadata: {},
      });
      expect(document.id).toBe(documentIdFor(kb.id, "a.txt"));
      expect(document.id).toMatch(/^doc_[0-9a-f]{32}$/);
    } finally {
      await cleanup();
    }
  });

  it("keeps its data across reopening the file", async () => {
    const { db, file, cleanup } = openTestDatabase();
    try {
      const created = await new SqliteCatalog(db).createKnowledgeBase({
        name: "durable",
        description: "d",
        embeddingModel: "m",
        embeddingDimension: 8,
        chunking: { strategy: "recursive", chunkSize: 100, chunkOverlap: 10, separators: [] },
      });
      db.close();
      const reopened = openDatabase(file);
      try {
        expect(await new SqliteCatalog(reopened).getKnowledgeBase("durable")).toEqual(created);
      } finally {
        reopened.close();
      }
    } finally {
      await cleanup();
    }
  });

  it("reports a closed database as unavailable", async () => {
    const { db, cleanup } = openTestDatabase();
    const catalog = new SqliteCatalog(db);
    db.close();
    try {
      await expect(catalog.listKnowledgeBases()).rejects.toBeInstanceOf(UnavailableError);
      await expect(catalog.getDocument("doc_x")).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await cleanup();
    }
  });
});
