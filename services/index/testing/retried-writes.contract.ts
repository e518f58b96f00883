// What a document store's conditional writes do when they are sent again after they landed — the
// engine clients' own retry after a timeout or a dropped connection (a node cut off mid-call): the
// second try finds the first's record and the engine answers 409. The write succeeded; only a record
// holding something else is a conflict. Run on each engine (OpenSearch, Elasticsearch).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DocumentStorePort } from "../document-store/document-store-port.ts";

export interface RetriedWritesSubject {
  store: DocumentStorePort;
  /** An index name of the test's own. */
  index: string;
  cleanup(): Promise<void>;
}

export function describeRetriedWritesContract(engine: string, open: () => Promise<RetriedWritesSubject>): void {
  describe(`${engine}: a conditional write sent again after it landed`, () => {
    let subject: RetriedWritesSubject;
    beforeAll(async () => {
      subject = await open();
      await subject.store.createIndex(subject.index, { mappings: { dynamic: "true", properties: {} } });
    });
    afterAll(() => subject?.cleanup());

    const conflict = (error: unknown) => subject.store.errors.isResponseError(error, 409);

    it("a create succeeds when the record there is the one it sends, and is refused when it is another", async () => {
      const { store, index } = subject;
      const record = { record_type: "conversation", id: "cv_1", title: "日本語 and English", turn_count: 0, created_at: 1_796_316_019_206, tags: ["a", "b"] };
      await store.create(index, "conversation:cv_1", record);
      await expect(store.create(index, "conversation:cv_1", { ...record })).resolves.toBeUndefined();
      const other = await store.create(index, "conversation:cv_1", { ...record, title: "someone else's" }).then(() => "created", (error: unknown) => (conflict(error) ? "409" : String(error)));
      expect(other).toBe("409");
      expect((await store.get<typeof record>(index, "conversation:cv_1"))?.source).toEqual(record);
    });

    it("a put ifUnchanged succeeds when the record now is the one it sends, and is refused when it is another", async () => {
      const { store, index } = subject;
      await store.create(index, "lease:x", { owner: "a", expires_at: 1 });
      const read = (await store.get<object>(index, "lease:x"))!;
      const renewed = { owner: "a", expires_at: 2 };
      await store.put(index, "lease:x", renewed, { refresh: true, ifUnchanged: read });
      await expect(store.put(index, "lease:x", { ...renewed }, { refresh: true, ifUnchanged: read })).resolves.toBeUndefined();
      const taken = await store.put(index, "lease:x", { owner: "b", expires_at: 3 }, { refresh: true, ifUnchanged: read }).then(() => "written", (error: unknown) => (conflict(error) ? "409" : String(error)));
      expect(taken).toBe("409");
      expect((await store.get<object>(index, "lease:x"))?.source).toEqual(renewed);
    });
  });
}
