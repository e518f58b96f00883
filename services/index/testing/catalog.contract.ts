// The behaviour every Catalog must show, written only against the interface: the SQLite and the
// OpenSearch catalogs run this same suite. Each test makes its own uniquely named knowledge bases,
// so suites can run in parallel against one shared backend.
import { RETRYING_MARK } from "../../../lib/domain.ts";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DocumentStatus, IngestionProgress } from "../../../lib/domain.ts";
import { AlreadyExistsError, NotFoundError } from "../../../lib/errors.ts";
import type { Catalog, NewDocumentVersion, NewKnowledgeBase } from "../catalog/catalog.ts";

export interface CatalogFixture {
  catalog: Catalog;
  cleanup(): Promise<void>;
}

export function describeCatalogContract(name: string, factory: () => Promise<CatalogFixture>): void {
  describe(`Catalog contract: ${name}`, () => {
    let fixture: CatalogFixture;
    let catalog: Catalog;

    beforeAll(async () => {
      fixture = await factory();
      catalog = fixture.catalog;
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    function newKnowledgeBase(overrides: Partial<NewKnowledgeBase> = {}): NewKnowledgeBase {
      return {
        name: `contract-${randomUUID()}`,
        description: "contract test knowledge base",
        embeddingModel: "test-model",
        embeddingDimension: 4,
        chunking: { strategy: "recursive", chunkSize: 200, chunkOverlap: 20, separators: ["\n\n", "\n"] },
        ...overrides,
      };
    }

    function newVersion(knowledgeBaseId: string, overrides: Partial<NewDocumentVersion> = {}): NewDocumentVersion {
      return {
        knowledgeBaseId,
        fileName: `file-${randomUUID()}.txt`,
        mimeType: "text/plain",
        sizeBytes: 120,
        contentHash: `hash-${randomUUID()}`,
        version: 1_000,
        metadata: { source: "contract" },
        ...overrides,
      };
    }

    function progress(documentId: string, knowledgeBaseId: string, version: number, phase: DocumentStatus, overrides: Partial<IngestionProgress> = {}): IngestionProgress {
      return {
        documentId,
        knowledgeBaseId,
        version,
        phase,
        percent: 50,
        message: "",
        error: "",
        chunkCount: 0,
        tokenCount: 0,
        at: new Date(),
        ...overrides,
      };
    }

    describe("knowledge bases", () => {
      it("records a change of embedding model and switches the model only when told to", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        expect(kb.modelChange).toBeUndefined();
        const startedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
        const running = { targetModel: "other-model", targetDimension: 8, previousModel: "test-model", state: "running" as const, documentsDone: 1, documentsTotal: 3, error: "", startedAt, updatedAt: startedAt };
        const saved = await catalog.saveModelChange(kb.id, running);
        expect(saved).toMatchObject({ embeddingModel: "test-model", embeddingDimension: 4, modelChange: running });
        expect((await catalog.getKnowledgeBase(kb.name)).modelChange).toEqual(running);

        const done = { ...running, state: "done" as const, documentsDone: 3 };
        const switched = await catalog.saveModelChange(kb.id, done, { switchModel: true });
        expect(switched).toMatchObject({ embeddingModel: "other-model", embeddingDimension: 8, modelChange: done });
        const listed = (await catalog.listKnowledgeBases()).find((k) => k.id === kb.id);
        expect(listed).toMatchObject({ embeddingModel: "other-model", embeddingDimension: 8, modelChange: done });
        await expect(catalog.saveModelChange("kb_missing_for_model_change", running)).rejects.toBeInstanceOf(NotFoundError);
      });

      it("keeps the documents marked during a change of model per base until they are cleared, and drops them with the base", async () => {
        const [a, b] = [await catalog.createKnowledgeBase(newKnowledgeBase()), await catalog.createKnowledgeBase(newKnowledgeBase())];
        expect(await catalog.modelChangeDocuments(a.id)).toEqual([]);
        await catalog.markModelChangeDocuments(a.id, ["doc_2", "doc_1"]);
        await catalog.markModelChangeDocuments(a.id, ["doc_1"]);
        await catalog.markModelChangeDocuments(b.id, ["doc_3"]);
        // Seen at once (the change lists them right after the writers marked them), each once.
        expect(await catalog.modelChangeDocuments(a.id)).toEqual(["doc_1", "doc_2"]);
        expect(await catalog.modelChangeDocuments(b.id)).toEqual(["doc_3"]);
        // The marks are no documents: the base's counts and listing do not see them.
        expect((await catalog.getKnowledgeBase(a.id)).documentCount).toBe(0);
        expect(await catalog.listDocuments(a.id)).toEqual([]);
        await catalog.clearModelChangeDocuments(a.id);
        expect(await catalog.modelChangeDocuments(a.id)).toEqual([]);
        expect(await catalog.modelChangeDocuments(b.id)).toEqual(["doc_3"]);
        await catalog.deleteKnowledgeBase(b.id);
        expect(await catalog.modelChangeDocuments(b.id)).toEqual([]);
      });

      it("creates a knowledge base and finds it by id, by name and in the list", async () => {
        const input = newKnowledgeBase();
        const created = await catalog.createKnowledgeBase(input);
        expect(created.id).toMatch(/^kb_/);
        expect(created).toMatchObject({
          name: input.name,
          description: input.description,
          embeddingModel: input.embeddingModel,
          embeddingDimension: input.embeddingDimension,
          chunking: input.chunking,
          documentCount: 0,
          chunkCount: 0,
          tokenCount: 0,
        });
        expect(created.createdAt).toBeInstanceOf(Date);

        expect(await catalog.getKnowledgeBase(created.id)).toEqual(created);
        expect(await catalog.getKnowledgeBase(input.name)).toEqual(created);
        const listed = await catalog.listKnowledgeBases();
        expect(listed.map((kb) => kb.id)).toContain(created.id);
      });

      it("keeps a base's two-level chunking settings (parent mode and size) as they were given", async () => {
        const input = newKnowledgeBase({ chunking: { strategy: "recursive", chunkSize: 128, chunkOverlap: 16, separators: [], parent: "document", parentMaxTokens: 1024 } });
        const created = await catalog.createKnowledgeBase(input);
        expect((await catalog.getKnowledgeBase(created.id))!.chunking).toEqual(input.chunking);
        expect((await catalog.listKnowledgeBases()).find((kb) => kb.id === created.id)!.chunking).toEqual(input.chunking);
      });

      it("rejects a second knowledge base with the same name", async () => {
        const input = newKnowledgeBase();
        const first = await catalog.createKnowledgeBase(input);
        await expect(catalog.createKnowledgeBase({ ...input, description: "another" })).rejects.toBeInstanceOf(AlreadyExistsError);
        const sameName = (await catalog.listKnowledgeBases()).filter((kb) => kb.name === input.name);
        expect(sameName.map((kb) => kb.id)).toEqual([first.id]);
      });

      it("updates a base's name, description and chunking, finds it by its new name only, and keeps the rest", async () => {
        const input = newKnowledgeBase();
        const created = await catalog.createKnowledgeBase(input);
        const doc = await catalog.registerDocument(newVersion(created.id));
        const newName = `renamed-${randomUUID()}`;
        const chunking = { strategy: "recursive" as const, chunkSize: 300, chunkOverlap: 0, separators: [], parent: "section" as const, parentMaxTokens: 900 };
        const updated = await catalog.updateKnowledgeBase(created.id, { name: newName, description: "edited", chunking });
        expect(updated).toMatchObject({ id: created.id, name: newName, description: "edited", chunking, embeddingModel: input.embeddingModel, documentCount: 1 });
        expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());
        expect(await catalog.getKnowledgeBase(newName)).toEqual(updated);
        await expect(catalog.getKnowledgeBase(input.name)).rejects.toBeInstanceOf(NotFoundError);
        expect((await catalog.getDocument(doc.document.id)).knowledgeBaseId).toBe(created.id);

        // Absent fields are kept; the old name is free for another base.
        const described = await catalog.updateKnowledgeBase(created.id, { description: "only this" });
        expect(described).toMatchObject({ name: newName, description: "only this", chunking });
        const reuse = await catalog.createKnowledgeBase({ ...input });
        expect(reuse.name).toBe(input.name);
      });

      it("refuses a name another base has, and an unknown base, changing nothing", async () => {
        const a = await catalog.createKnowledgeBase(newKnowledgeBase());
        const b = await catalog.createKnowledgeBase(newKnowledgeBase());
        await expect(catalog.updateKnowledgeBase(b.id, { name: a.name, description: "lost" })).rejects.toBeInstanceOf(AlreadyExistsError);
        expect(await catalog.getKnowledgeBase(b.id)).toMatchObject({ name: b.name, description: b.description });
        expect((await catalog.getKnowledgeBase(a.name)).id).toBe(a.id);
        await expect(catalog.updateKnowledgeBase("kb_missing", { description: "x" })).rejects.toBeInstanceOf(NotFoundError);
        // Keeping its own name is no clash; the base is still found by it.
        expect(await catalog.updateKnowledgeBase(a.id, { name: a.name, description: "same name" })).toMatchObject({ name: a.name, description: "same name" });
        expect((await catalog.getKnowledgeBase(a.name)).id).toBe(a.id);
      });

      it("gives distinct ids to distinct knowledge bases", async () => {
        const a = await catalog.createKnowledgeBase(newKnowledgeBase());
        const b = await catalog.createKnowledgeBase(newKnowledgeBase());
        expect(a.id).not.toBe(b.id);
      });

      it("reports unknown knowledge bases as NotFound", async () => {
        const unknown = `kb_missing_${randomUUID().replaceAll("-", "")}`;
        await expect(catalog.getKnowledgeBase(unknown)).rejects.toBeInstanceOf(NotFoundError);
        await expect(catalog.deleteKnowledgeBase(unknown)).rejects.toBeInstanceOf(NotFoundError);
        await expect(catalog.registerDocument(newVersion(unknown))).rejects.toBeInstanceOf(NotFoundError);
      });

      it("deletes a knowledge base together with its documents", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const { document } = await catalog.registerDocument(newVersion(kb.id));
        await catalog.deleteKnowledgeBase(kb.id);
        await expect(catalog.getKnowledgeBase(kb.id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(catalog.getDocument(document.id)).rejects.toBeInstanceOf(NotFoundError);
        expect((await catalog.listKnowledgeBases()).map((k) => k.id)).not.toContain(kb.id);
      });

      it("counts all documents but only the chunks and tokens of ready ones", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const a = (await catalog.registerDocument(newVersion(kb.id))).document;
        const b = (await catalog.registerDocument(newVersion(kb.id))).document;
        await catalog.registerDocument(newVersion(kb.id));

        await catalog.applyProgress(progress(a.id, kb.id, a.version, "ready", { chunkCount: 3, tokenCount: 100 }));
        // b is still embedding: its chunk count is not settled and must not be counted yet.
        await catalog.applyProgress(progress(b.id, kb.id, b.version, "embedding", { chunkCount: 7, tokenCount: 900 }));
        let counted = await catalog.getKnowledgeBase(kb.id);
        expect(counted).toMatchObject({ documentCount: 3, chunkCount: 3, tokenCount: 100 });

        await catalog.applyProgress(progress(b.id, kb.id, b.version, "ready", { chunkCount: 7, tokenCount: 900 }));
        counted = await catalog.getKnowledgeBase(kb.id);
        expect(counted).toMatchObject({ documentCount: 3, chunkCount: 10, tokenCount: 1000 });
        expect((await catalog.listKnowledgeBases()).find((k) => k.id === kb.id)).toMatchObject({ documentCount: 3, chunkCount: 10 });

        await catalog.deleteDocument(a.id);
        expect(await catalog.getKnowledgeBase(kb.id)).toMatchObject({ documentCount: 2, chunkCount: 7, tokenCount: 900 });
      });
    });

    describe("documents", () => {
      it("registers a new document as pending with a stable id per knowledge base and file name", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const other = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id, { fileName: "report.pdf", metadata: { title: "Report" } });
        const registered = await catalog.registerDocument(input);
        expect(registered.unchanged).toBe(false);
        expect(registered.document).toMatchObject({
          knowledgeBaseId: kb.id,
          fileName: "report.pdf",
          mimeType: input.mimeType,
          sizeBytes: input.sizeBytes,
          contentHash: input.contentHash,
          version: input.version,
          status: "pending",
          progressPercent: 0,
          errorMessage: "",
          enabled: true,
          metadata: { title: "Report" },
        });
        expect(await catalog.getDocument(registered.document.id)).toEqual(registered.document);

        const newer = await catalog.registerDocument({ ...input, contentHash: "changed", version: input.version + 1 });
        expect(newer.document.id).toBe(registered.document.id);
        const elsewhere = await catalog.registerDocument({ ...input, knowledgeBaseId: other.id });
        expect(elsewhere.document.id).not.toBe(registered.document.id);
      });

      it("leaves identical content alone and reports it unchanged", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const first = await catalog.registerDocument(input);
        await catalog.applyProgress(progress(first.document.id, kb.id, input.version, "ready", { chunkCount: 2, tokenCount: 40 }));

        const again = await catalog.registerDocument({ ...input, version: input.version + 10 });
        expect(again.unchanged).toBe(true);
        expect(again.document).toMatchObject({ version: input.version, status: "ready", chunkCount: 2 });
        expect(await catalog.getDocument(first.document.id)).toMatchObject({ version: input.version, status: "ready" });
      });

      it("registers identical content as a new pending version when it is a re-ingest", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const first = await catalog.registerDocument(input);
        await catalog.applyProgress(progress(first.document.id, kb.id, input.version, "ready", { chunkCount: 2, tokenCount: 40 }));

        const again = await catalog.registerDocument({ ...input, version: input.version + 10, reingest: true });
        expect(again.unchanged).toBe(false);
        expect(again.document).toMatchObject({ id: first.document.id, version: input.version + 10, status: "pending", chunkCount: 0, contentHash: input.contentHash });
        expect(await catalog.getDocument(first.document.id)).toMatchObject({ version: input.version + 10, status: "pending" });
      });

      it("records changed content as a new pending version and clears progress and error", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const first = await catalog.registerDocument(input);
        await catalog.applyProgress(progress(first.document.id, kb.id, input.version, "failed", { percent: 40, error: "parser crashed" }));
        expect(await catalog.getDocument(first.document.id)).toMatchObject({ status: "failed", errorMessage: "parser crashed" });

        const second = await catalog.registerDocument({ ...input, contentHash: "new-content", version: input.version + 5, sizeBytes: 999 });
        expect(second.unchanged).toBe(false);
        expect(second.document).toMatchObject({
          id: first.document.id,
          version: input.version + 5,
          contentHash: "new-content",
          sizeBytes: 999,
          status: "pending",
          progressPercent: 0,
          errorMessage: "",
        });
        expect(await catalog.getDocument(first.document.id)).toEqual(second.document);
        expect(await catalog.listDocuments(kb.id)).toHaveLength(1);
      });

      it("ingests identical content again when the previous attempt failed", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const first = await catalog.registerDocument(input);
        await catalog.applyProgress(progress(first.document.id, kb.id, input.version, "failed", { error: "embedder down" }));

        const retry = await catalog.registerDocument({ ...input, version: input.version + 1 });
        expect(retry.unchanged).toBe(false);
        expect(retry.document).toMatchObject({ version: input.version + 1, status: "pending", errorMessage: "" });
      });

      it("registers identical content again while the stored version is still pending (its event may never have been published)", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const first = await catalog.registerDocument(input);
        const retry = await catalog.registerDocument({ ...input, version: input.version + 1 });
        expect(retry.unchanged).toBe(false);
        expect(retry.document).toMatchObject({ id: first.document.id, version: input.version + 1, status: "pending" });
        // Once a stage has taken it, the same content is unchanged again.
        await catalog.applyProgress(progress(first.document.id, kb.id, input.version + 1, "parsing", { percent: 10 }));
        const again = await catalog.registerDocument({ ...input, version: input.version + 2 });
        expect(again.unchanged).toBe(true);
      });

      it("treats registering the same version twice as one registration", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const first = await catalog.registerDocument(input);
        await catalog.applyProgress(progress(first.document.id, kb.id, input.version, "parsing", { percent: 10 }));
        const second = await catalog.registerDocument(input);
        expect(second.unchanged).toBe(first.unchanged);
        expect(second.document).toMatchObject({ id: first.document.id, version: input.version, status: "parsing" });
        expect(await catalog.listDocuments(kb.id)).toHaveLength(1);
      });

      it("lists every document and knowledge base, beyond one page of the engine's results", async () => {
        // The distributed fixtures page by 2 records here, as they page by 10,000 in production.
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const names = ["e.txt", "a.txt", "d.txt", "b.txt", "c.txt"];
        for (const fileName of names) await catalog.registerDocument(newVersion(kb.id, { fileName }));
        expect((await catalog.listDocuments(kb.id)).map((d) => d.fileName)).toEqual([...names].sort());
        const more = [await catalog.createKnowledgeBase(newKnowledgeBase()), await catalog.createKnowledgeBase(newKnowledgeBase())];
        const listed = (await catalog.listKnowledgeBases()).map((k) => k.id);
        for (const id of [kb.id, ...more.map((k) => k.id)]) expect(listed).toContain(id);
        expect(new Set(listed).size).toBe(listed.length);
      });

      it("lists the documents of one knowledge base only", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const other = await catalog.createKnowledgeBase(newKnowledgeBase());
        const a = await catalog.registerDocument(newVersion(kb.id, { fileName: "a.txt" }));
        const b = await catalog.registerDocument(newVersion(kb.id, { fileName: "b.txt" }));
        await catalog.registerDocument(newVersion(other.id, { fileName: "a.txt" }));
        const listed = await catalog.listDocuments(kb.id);
        expect(listed.map((d) => d.id).sort()).toEqual([a.document.id, b.document.id].sort());
        expect(listed.every((d) => d.knowledgeBaseId === kb.id)).toBe(true);
      });

      it("enables, disables and deletes documents, and reports unknown ones as NotFound", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const { document } = await catalog.registerDocument(newVersion(kb.id));
        expect((await catalog.setDocumentEnabled(document.id, false)).enabled).toBe(false);
        expect((await catalog.getDocument(document.id)).enabled).toBe(false);
        expect((await catalog.setDocumentEnabled(document.id, true)).enabled).toBe(true);

        await catalog.deleteDocument(document.id);
        await expect(catalog.getDocument(document.id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(catalog.deleteDocument(document.id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(catalog.setDocumentEnabled(document.id, true)).rejects.toBeInstanceOf(NotFoundError);
        expect(await catalog.listDocuments(kb.id)).toEqual([]);
      });

      it("keeps a disabled document disabled across a new version", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const { document } = await catalog.registerDocument(input);
        await catalog.setDocumentEnabled(document.id, false);
        const next = await catalog.registerDocument({ ...input, contentHash: "v2", version: input.version + 1 });
        expect(next.document.enabled).toBe(false);
      });
    });

    describe("ingestion progress", () => {
      it("moves a document through its phases and records counts when ready", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const { document } = await catalog.registerDocument(newVersion(kb.id));
        const parsing = await catalog.applyProgress(progress(document.id, kb.id, document.version, "parsing", { percent: 10 }));
        expect(parsing).toMatchObject({ status: "parsing", progressPercent: 10 });
        const embedding = await catalog.applyProgress(progress(document.id, kb.id, document.version, "embedding", { percent: 60, chunkCount: 4 }));
        expect(embedding).toMatchObject({ status: "embedding", progressPercent: 60 });
        const ready = await catalog.applyProgress(progress(document.id, kb.id, document.version, "ready", { percent: 100, chunkCount: 4, tokenCount: 321 }));
        expect(ready).toMatchObject({ status: "ready", progressPercent: 100, chunkCount: 4, tokenCount: 321, errorMessage: "" });
        expect(await catalog.getDocument(document.id)).toEqual(ready);
      });

      it("lists a finished status (ready or failed) as soon as it is applied", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const ready = (await catalog.registerDocument(newVersion(kb.id))).document;
        const failed = (await catalog.registerDocument({ ...newVersion(kb.id), fileName: "failed.txt" })).document;
        await catalog.applyProgress(progress(ready.id, kb.id, ready.version, "embedding", { percent: 60 }));
        await catalog.applyProgress(progress(ready.id, kb.id, ready.version, "ready", { chunkCount: 3, tokenCount: 40 }));
        await catalog.applyProgress(progress(failed.id, kb.id, failed.version, "failed", { error: "unreadable" }));
        const listed = new Map((await catalog.listDocuments(kb.id)).map((d) => [d.id, d]));
        expect(listed.get(ready.id)).toMatchObject({ status: "ready", chunkCount: 3 });
        expect(listed.get(failed.id)).toMatchObject({ status: "failed", errorMessage: "unreadable" });
      });

      it("records the error of a failed ingestion", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const { document } = await catalog.registerDocument(newVersion(kb.id));
        const failed = await catalog.applyProgress(progress(document.id, kb.id, document.version, "failed", { error: "unsupported format" }));
        expect(failed).toMatchObject({ status: "failed", errorMessage: "unsupported format" });
      });

      it("keeps what a version's indexing did to hand edits through its later progress, and forgets it with a new version", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const { document } = await catalog.registerDocument(input);
        const note = 'kept 1 edited chunk(s); dropped 1 edit(s) whose original text is not in this version: #2 (edited: "x")';
        await catalog.applyProgress(progress(document.id, kb.id, input.version, "ready", { chunkCount: 3, chunkEdits: note }));
        // The same ready again from the topic, without the note: the note stays.
        await catalog.applyProgress(progress(document.id, kb.id, input.version, "ready", { chunkCount: 3 }));
        expect((await catalog.getDocument(document.id)).chunkEdits).toBe(note);
        expect((await catalog.listDocuments(kb.id)).find((d) => d.id === document.id)?.chunkEdits).toBe(note);
        const next = await catalog.registerDocument({ ...input, contentHash: "v2", version: input.version + 1 });
        expect(next.document.chunkEdits).toBeUndefined();
        await catalog.applyProgress(progress(document.id, kb.id, input.version + 1, "ready", { chunkCount: 3 }));
        expect((await catalog.getDocument(document.id)).chunkEdits).toBeUndefined();
      });

      it("keeps the trace id a version was submitted in through its progress, and a new version's own (or none)", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        const input = { ...newVersion(kb.id), traceId };
        const { document } = await catalog.registerDocument(input);
        expect(document.traceId).toBe(traceId);
        await catalog.applyProgress(progress(document.id, kb.id, input.version, "ready", { chunkCount: 3 }));
        expect((await catalog.getDocument(document.id)).traceId).toBe(traceId);
        expect((await catalog.listDocuments(kb.id)).find((d) => d.id === document.id)?.traceId).toBe(traceId);
        const { traceId: _, ...plain } = input;
        const untraced = await catalog.registerDocument({ ...plain, contentHash: "v2", version: input.version + 1 });
        expect(untraced.document.traceId).toBeUndefined();
        expect((await catalog.getDocument(document.id)).traceId).toBeUndefined();
      });

      it("ignores progress for an older version and for unknown documents", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const input = newVersion(kb.id);
        const first = await catalog.registerDocument(input);
        const second = await catalog.registerDocument({ ...input, contentHash: "v2", version: input.version + 100 });

        expect(await catalog.applyProgress(progress(first.document.id, kb.id, input.version, "ready", { chunkCount: 9 }))).toBeNull();
        expect(await catalog.getDocument(first.document.id)).toEqual(second.document);

        const unknown = progress(`doc_${randomUUID().replaceAll("-", "")}`, kb.id, 1, "parsing");
        expect(await catalog.applyProgress(unknown)).toBeNull();
      });

      it("never moves a ready or failed version back to an earlier phase", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const ready = (await catalog.registerDocument(newVersion(kb.id))).document;
        await catalog.applyProgress(progress(ready.id, kb.id, ready.version, "ready", { chunkCount: 2, tokenCount: 30 }));
        await catalog.applyProgress(progress(ready.id, kb.id, ready.version, "embedding", { percent: 70 }));
        expect(await catalog.getDocument(ready.id)).toMatchObject({ status: "ready", progressPercent: 100, chunkCount: 2 });

        const failed = (await catalog.registerDocument(newVersion(kb.id))).document;
        await catalog.applyProgress(progress(failed.id, kb.id, failed.version, "failed", { error: "boom" }));
        await catalog.applyProgress(progress(failed.id, kb.id, failed.version, "parsing", { percent: 5 }));
        expect(await catalog.getDocument(failed.id)).toMatchObject({ status: "failed", errorMessage: "boom" });
      });

      it("lets a retry move on a document whose failure was a backend's", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const { document } = await catalog.registerDocument(newVersion(kb.id));
        const down = `parser: Tika is unreachable ${RETRYING_MARK}`;
        await catalog.applyProgress(progress(document.id, kb.id, document.version, "failed", { error: down }));
        expect(await catalog.getDocument(document.id)).toMatchObject({ status: "failed", errorMessage: down });
        await catalog.applyProgress(progress(document.id, kb.id, document.version, "parsing", { percent: 10 }));
        await catalog.applyProgress(progress(document.id, kb.id, document.version, "ready", { chunkCount: 4, tokenCount: 50 }));
        expect(await catalog.getDocument(document.id)).toMatchObject({ status: "ready", errorMessage: "", chunkCount: 4 });
      });

      it("lets a newer version's progress reset a finished document", async () => {
        const kb = await catalog.createKnowledgeBase(newKnowledgeBase());
        const { document } = await catalog.registerDocument(newVersion(kb.id));
        await catalog.applyProgress(progress(document.id, kb.id, document.version, "failed", { error: "timeout" }));
        const newer = await catalog.applyProgress(progress(document.id, kb.id, document.version + 1, "parsing", { percent: 5 }));
        expect(newer).toMatchObject({ version: document.version + 1, status: "parsing", progressPercent: 5, errorMessage: "" });
        expect(await catalog.applyProgress(progress(document.id, kb.id, document.version, "ready"))).toBeNull();
        expect((await catalog.getDocument(document.id)).status).toBe("parsing");
      });
    });
  });
}
