// The behaviour every SourceStore must show, run against SQLite and OpenSearch (and Elasticsearch
// through the same document-store code).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AlreadyExistsError, NotFoundError } from "../../../lib/errors.ts";
import type { SourceStore, StoredSource, StoredSourceItem } from "../sources/source-store.ts";

export interface SourceStoreFixture {
  sources: SourceStore;
  cleanup(): Promise<void>;
}

const source = (overrides: Partial<StoredSource> = {}): StoredSource => ({
  id: `src_${randomUUID().slice(0, 8)}`,
  knowledgeBaseId: `kb_${randomUUID().slice(0, 8)}`,
  name: "docs",
  body: { kind: "folder", folder: { path: "/srv/docs", include: ["**/*.md"] }, tags: { team: "a" } },
  ...overrides,
});

const item = (itemId: string, overrides: Partial<StoredSourceItem> = {}): StoredSourceItem => ({
  itemId,
  changeToken: `${itemId}-t1`,
  contentHash: `hash-${itemId}`,
  documentId: `doc_${itemId}`,
  fileName: itemId,
  ...overrides,
});

export function describeSourceStoreContract(backend: string, open: () => Promise<SourceStoreFixture>): void {
  describe(`source store (${backend})`, () => {
    let fixture: SourceStoreFixture;
    let sources: SourceStore;
    beforeAll(async () => {
      fixture = await open();
      sources = fixture.sources;
    });
    afterAll(() => fixture?.cleanup());

    it("saves, replaces, lists by base and deletes a source with its cursor", async () => {
      const a = source();
      const b = source({ knowledgeBaseId: a.knowledgeBaseId, name: "archive" });
      const elsewhere = source({ name: "docs" });
      await sources.save(a);
      await sources.save(b);
      await sources.save(elsewhere);
      expect((await sources.list(a.knowledgeBaseId)).map((s) => s.name)).toEqual(["archive", "docs"]);
      expect(await sources.get(a.id)).toEqual(a);

      const replaced = { ...a, body: { ...a.body, lastSync: { state: "SOURCE_SYNC_STATE_DONE", added: 3 } } };
      await sources.save(replaced);
      expect(await sources.get(a.id)).toEqual(replaced);

      await sources.saveItem(a.id, item("x.md"));
      await sources.delete(a.id);
      await expect(sources.get(a.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(sources.delete(a.id)).rejects.toBeInstanceOf(NotFoundError);
      expect(await sources.items(a.id)).toEqual([]);
      // Its name is free again.
      await sources.save(source({ knowledgeBaseId: a.knowledgeBaseId, name: "docs" }));
    });

    it("refuses a name another source of the base has", async () => {
      const a = await sources.save(source());
      await expect(sources.save(source({ knowledgeBaseId: a.knowledgeBaseId, name: a.name }))).rejects.toBeInstanceOf(AlreadyExistsError);
      const b = await sources.save(source({ knowledgeBaseId: a.knowledgeBaseId, name: "other" }));
      await expect(sources.save({ ...b, name: a.name })).rejects.toBeInstanceOf(AlreadyExistsError);
      expect((await sources.get(b.id)).name).toBe("other");
    });

    it("keeps a cursor per source: write, overwrite, forget, and read back every item written", async () => {
      const a = await sources.save(source());
      const b = await sources.save(source());
      const many = Array.from({ length: 120 }, (_, i) => item(`page-${String(i).padStart(3, "0")}.md`));
      for (const it of many) await sources.saveItem(a.id, it);
      await sources.saveItem(b.id, item("page-000.md", { documentId: "doc_other" }));
      await sources.saveItem(a.id, item("page-001.md", { changeToken: "t2", contentHash: "h2" }));
      await sources.deleteItem(a.id, "page-002.md");
      await sources.deleteItem(a.id, "never-there.md");
      const listed = await sources.items(a.id);
      expect(listed).toHaveLength(119);
      expect(listed.find((i) => i.itemId === "page-001.md")).toMatchObject({ changeToken: "t2", contentHash: "h2" });
      expect(listed.some((i) => i.itemId === "page-002.md")).toBe(false);
      expect(await sources.items(b.id)).toEqual([item("page-000.md", { documentId: "doc_other" })]);
    });
  });
}
