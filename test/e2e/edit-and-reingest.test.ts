// Editing a knowledge base and re-ingesting its documents, end to end over HTTP through the gateway:
// UpdateKnowledgeBase renames a base, edits its description and sets the chunking of future
// ingests (bad settings, a taken name and an unknown base get their own codes); ReingestDocument
// and ReingestKnowledgeBase run the kept originals through the pipeline again as new versions, so
// the new chunk size shows in the chunk count; a document whose original is gone says so. Run
// embedded on SQLite, and on OpenSearch when it is there.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { DocumentStatus, ParentMode, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { failure, lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

// Twelve paragraphs of ~45 words: a few chunks at 200 tokens, many more at 40.
const LONG = Array.from(
  { length: 12 },
  (_, i) => `Section ${i + 1}. The lighthouse keeper logged the wind at dawn, trimmed the wick, polished the lens and noted every ship that passed the reef near station ${i + 1}, with its flag, its heading and the hour it cleared the channel into the harbour.`,
).join("\n\n");
const SHORT = "Tide tables for the northern harbour: high water at 06:12 and 18:40, low water at 00:05 and 12:30.";

interface Quarry {
  client: QuarryClient;
  dataDir: string;
  stop(): Promise<void>;
}

async function ready(client: QuarryClient, ids: string[]) {
  const log = await watchAll(client, ids);
  for (const id of ids) expect(lastUpdate(log, id).status, lastUpdate(log, id).error).toBe(DocumentStatus.READY);
  return log;
}

function editSuite(backend: string, start: () => Promise<Quarry>) {
  describe(`editing a knowledge base and re-ingesting (${backend})`, () => {
    let quarry: Quarry;
    let client: QuarryClient;
    const name = `edit-${randomBytes(3).toString("hex")}`;
    const renamed = `${name}-renamed`;
    let kbId = "";
    let longId = "";
    let shortId = "";
    let chunksBefore = 0;

    beforeAll(async () => {
      quarry = await start();
      client = quarry.client;
      const kb = (await client.createKnowledgeBase({ name, description: "before", chunking: { chunkSize: 200, chunkOverlap: 20 } })).knowledgeBase!;
      kbId = kb.id;
      longId = (await upload(client, name, "log.txt", new TextEncoder().encode(LONG))).document!.id;
      shortId = (await upload(client, name, "tides.txt", new TextEncoder().encode(SHORT))).document!.id;
      const log = await ready(client, [longId, shortId]);
      chunksBefore = lastUpdate(log, longId).chunkCount;
      expect(chunksBefore).toBeGreaterThan(1);
    }, 180_000);
    afterAll(async () => {
      await quarry?.stop();
    });

    it("refuses invalid settings, a taken name, a name like an id and an unknown base, changing nothing", async () => {
      const other = `${name}-other`;
      await client.createKnowledgeBase({ name: other });
      const tooBig = await failure(() => client.updateKnowledgeBase({ knowledgeBase: name, chunking: { chunkSize: 100_000 } }));
      expect(tooBig.code).toBe(Code.InvalidArgument);
      expect(tooBig.rawMessage).toMatch(/token/);
      const overlap = await failure(() => client.updateKnowledgeBase({ knowledgeBase: name, chunking: { chunkSize: 50, chunkOverlap: 50 } }));
      expect(overlap.code).toBe(Code.InvalidArgument);
      expect((await failure(() => client.updateKnowledgeBase({ knowledgeBase: name, name: other }))).code).toBe(Code.AlreadyExists);
      expect((await failure(() => client.updateKnowledgeBase({ knowledgeBase: name, name: "  " }))).code).toBe(Code.InvalidArgument);
      expect((await failure(() => client.updateKnowledgeBase({ knowledgeBase: name, name: "kb_lookalike" }))).code).toBe(Code.InvalidArgument);
      expect((await failure(() => client.updateKnowledgeBase({ knowledgeBase: "no-such-base", description: "x" }))).code).toBe(Code.NotFound);
      const kb = (await client.getKnowledgeBase({ knowledgeBase: name })).knowledgeBase!;
      expect(kb).toMatchObject({ id: kbId, name, description: "before" });
      expect(kb.chunking).toMatchObject({ chunkSize: 200, chunkOverlap: 20 });
      await client.deleteKnowledgeBase({ knowledgeBase: other });
    });

    it("renames the base, edits its description and sets the chunking of future ingests", async () => {
      const updated = (await client.updateKnowledgeBase({ knowledgeBase: name, name: renamed, description: "after", chunking: { chunkSize: 40, chunkOverlap: 0, parent: ParentMode.SECTION } })).knowledgeBase!;
      expect(updated).toMatchObject({ id: kbId, name: renamed, description: "after", documentCount: 2n });
      // Unset fields take the defaults for the model, as at creation (the parent's size here).
      expect(updated.chunking).toMatchObject({ chunkSize: 40, chunkOverlap: 0, parent: ParentMode.SECTION });
      expect(updated.chunking!.parentMaxTokens).toBeGreaterThan(0);
      expect((await client.getKnowledgeBase({ knowledgeBase: renamed })).knowledgeBase!.id).toBe(kbId);
      expect((await failure(() => client.getKnowledgeBase({ knowledgeBase: name }))).code).toBe(Code.NotFound);
      // Documents already ingested keep their chunks until re-ingested.
      const doc = (await client.getDocument({ documentId: longId })).document!;
      expect(doc).toMatchObject({ status: DocumentStatus.READY, chunkCount: chunksBefore });
      // Only the description: the rest is kept.
      const described = (await client.updateKnowledgeBase({ knowledgeBase: kbId, description: "after, again" })).knowledgeBase!;
      expect(described).toMatchObject({ name: renamed, description: "after, again" });
      expect(described.chunking).toEqual(updated.chunking);
    });

    it("re-ingests a document from its kept original with the new settings, as a new version", async () => {
      const before = (await client.getDocument({ documentId: longId })).document!;
      const { document } = await client.reingestDocument({ documentId: longId });
      expect(document).toMatchObject({ id: longId, status: DocumentStatus.PENDING, contentHash: before.contentHash, fileName: "log.txt" });
      expect(document!.version).toBeGreaterThan(before.version);
      const log = await ready(client, [longId]);
      const statuses = log.get(longId)!.map((u) => u.status);
      expect(statuses).toContain(DocumentStatus.READY);
      const chunksAfter = lastUpdate(log, longId).chunkCount;
      // 40-token chunks instead of 200: the new setting was used.
      expect(chunksAfter).toBeGreaterThan(chunksBefore * 2);
      expect((await client.getDocument({ documentId: longId })).document).toMatchObject({ version: document!.version, chunkCount: chunksAfter });
      const hits = await client.search({ query: "lighthouse keeper polished the lens", knowledgeBases: [renamed], settings: { mode: RetrievalMode.HYBRID, topK: 50 } });
      const ofLog = hits.hits.filter((h) => h.chunk!.documentId === longId);
      expect(ofLog.length).toBeGreaterThan(0);
      // Only the new version's chunks are searchable: none beyond its chunk count.
      expect(Math.max(...ofLog.map((h) => h.chunk!.index))).toBeLessThan(chunksAfter);
      expect(ofLog.every((h) => h.chunk!.tokenCount <= 40)).toBe(true);
    }, 120_000);

    it("re-ingests every document of a base, and says which originals were not kept", async () => {
      const { documents, notKept } = await client.reingestKnowledgeBase({ knowledgeBase: renamed });
      expect(documents.map((d) => d.id).sort()).toEqual([longId, shortId].sort());
      expect(notKept).toEqual([]);
      await ready(client, [longId, shortId]);

      // An original that is gone (as for a document submitted before Quarry kept them).
      await rm(join(quarry.dataDir, "blobs", "originals", kbId, shortId));
      const gone = await failure(() => client.reingestDocument({ documentId: shortId }));
      expect(gone.code).toBe(Code.FailedPrecondition);
      expect(gone.rawMessage).toContain("tides.txt");
      expect(gone.rawMessage).toMatch(/upload it again/);
      const partial = await client.reingestKnowledgeBase({ knowledgeBase: renamed });
      expect(partial.documents.map((d) => d.id)).toEqual([longId]);
      expect(partial.notKept.map((d) => d.fileName)).toEqual(["tides.txt"]);
      await ready(client, [longId]);
      // Uploading it again keeps it again.
      await upload(client, renamed, "tides.txt", new TextEncoder().encode(SHORT));
      expect((await client.reingestDocument({ documentId: shortId })).document!.status).toBe(DocumentStatus.PENDING);
      await ready(client, [shortId]);
    }, 120_000);

    it("answers not found for a deleted document, whose original goes with it", async () => {
      await client.deleteDocument({ documentId: shortId });
      expect((await failure(() => client.reingestDocument({ documentId: shortId }))).code).toBe(Code.NotFound);
      await expect(rm(join(quarry.dataDir, "blobs", "originals", kbId, shortId))).rejects.toMatchObject({ code: "ENOENT" });
      expect((await failure(() => client.reingestDocument({ documentId: "doc_nope" }))).code).toBe(Code.NotFound);
      expect((await failure(() => client.reingestKnowledgeBase({ knowledgeBase: "no-such-base" }))).code).toBe(Code.NotFound);
    });
  });
}

editSuite("embedded, SQLite", async () => {
  const quarry = await startEmbeddedQuarry();
  return { client: quarry.client, dataDir: quarry.dataDir, stop: () => quarry.stop() };
});

describeWithEngine("OPENSEARCH_URL", "embedded on OpenSearch", (opensearchUrl) => {
  editSuite("embedded, OpenSearch", async () => {
    const prefix = `quarry-edit-${randomBytes(4).toString("hex")}`;
    const quarry = await startEmbeddedQuarry({ env: { OPENSEARCH_URL: opensearchUrl, QUARRY_OPENSEARCH_PREFIX: prefix } });
    return { client: quarry.client, dataDir: quarry.dataDir, stop: async () => (await quarry.stop(), await deleteOpenSearchNamespace(opensearchUrl, prefix)) };
  });
});
