// Documents you can open and correct, end to end over HTTP through the gateway: a document's chunks
// listed in order with their sections and searched within; a chunk's text edited (re-embedded,
// marked edited, versioned, its id kept, searchable at once in the BM25 and the vector list, its
// citation still resolving to its document), disabled and enabled, and a chunk added by hand; bad
// edits refused with their codes; everything still there after a restart on the same data; and a
// re-ingest of a changed file keeping the edits whose original text is unchanged, dropping the
// others and saying so. Run embedded on SQLite, and on OpenSearch and Elasticsearch when they are there.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { DocumentStatus, RetrievalMode, type Chunk } from "../../gen/quarry/common/v1/common_pb.ts";
import type { Env } from "../../lib/config.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { elasticsearchTestSpace } from "../../services/index/testing/elasticsearch-test-support.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { failure, lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const WEATHER = "The keeper logged a north-westerly gale at dawn, with rain squalls from the sea and the barometer falling fast all morning.";
const SHIPS = "The schooner Marigold cleared the reef at noon under reduced sail, bound for the harbour with a cargo of slate.";
const LAMP = "The lamp room was swept, the brass polished and the paraffin reservoir filled before the evening watch.";
const logFile = (weather: string) => `# Station log\n\n## Weather\n\n${weather}\n\n## Ships\n\n${SHIPS}\n\n## Lamp\n\n${LAMP}\n`;

const bytes = (s: string) => new TextEncoder().encode(s);

interface Backend {
  env: Env;
  cleanup(): Promise<void>;
}

function chunkEditSuite(name: string, backend: () => Backend) {
  describe(`documents you can open and correct (${name})`, () => {
    let space: Backend;
    let quarry: EmbeddedQuarryFixture;
    let client: QuarryClient;
    const kbName = `open-${randomBytes(3).toString("hex")}`;
    let docId = "";
    let chunks: Chunk[] = [];
    const find = (text: string) => chunks.find((c) => c.text.includes(text))!;
    const hitsFor = async (query: string, mode = RetrievalMode.BM25) =>
      (await client.search({ query, knowledgeBases: [kbName], settings: { mode, topK: 10 } })).hits;

    beforeAll(async () => {
      space = backend();
      quarry = await startEmbeddedQuarry({ env: space.env });
      client = quarry.client;
      await client.createKnowledgeBase({ name: kbName, chunking: { chunkSize: 60, chunkOverlap: 0 } });
      docId = (await upload(client, kbName, "log.md", bytes(logFile(WEATHER)))).document!.id;
      const log = await watchAll(client, [docId]);
      expect(lastUpdate(log, docId).status, lastUpdate(log, docId).error).toBe(DocumentStatus.READY);
    }, 180_000);
    afterAll(async () => {
      await quarry?.stop();
      await space?.cleanup();
    });

    it("opens a document: its chunks in order with their sections, and a search within it", async () => {
      const opened = await client.listDocumentChunks({ documentId: docId });
      chunks = opened.chunks;
      expect(opened.document?.fileName).toBe("log.md");
      expect(opened.total).toBe(chunks.length);
      expect(chunks.map((c) => c.index)).toEqual([...chunks.keys()].map((i) => chunks[0].index + i));
      expect(find("north-westerly").sectionPath).toEqual(["Station log", "Weather"]);
      expect(find("Marigold").sectionPath).toEqual(["Station log", "Ships"]);
      expect(chunks.every((c) => c.version === 1 && !c.edited && !c.manual && !c.disabled)).toBe(true);
      const within = await client.listDocumentChunks({ documentId: docId, query: "SCHOONER  marigold" });
      expect(within.chunks.map((c) => c.id)).toEqual([find("Marigold").id]);
      expect(within.total).toBe(chunks.length);
    });

    it("edits a chunk: re-embedded, marked edited and versioned, its id kept, searchable at once in both lists and cited to its document", async () => {
      const weather = find("north-westerly");
      const text = "The keeper logged a zephyrine breeze at dawn, with a calm sea and the barometer steady all morning.";
      const { chunk } = await client.editChunk({ documentId: docId, chunkId: weather.id, text });
      expect(chunk).toMatchObject({ id: weather.id, documentId: docId, text, edited: true, version: 2, originalText: weather.text, manual: false });
      expect(chunk!.tokenCount).toBeGreaterThan(10);

      const keyword = await hitsFor("zephyrine");
      expect(keyword.map((h) => [h.chunk?.id, h.fileName, h.chunk?.documentId])).toEqual([[weather.id, "log.md", docId]]);
      expect((await hitsFor("north-westerly gale")).map((h) => h.chunk?.id)).not.toContain(weather.id);
      const vector = await hitsFor(text, RetrievalMode.VECTOR);
      expect(vector[0].chunk?.id).toBe(weather.id);
      // The stored vector is of the new text under its headings, as ingestion embeds a chunk.
      expect(vector[0].score).toBeGreaterThan(0.8);
      // A citation of the chunk still opens it, with its new text.
      expect((await client.getChunkNeighbours({ documentId: docId, chunkId: weather.id })).chunk?.text).toBe(text);

      const stale = await failure(() => client.editChunk({ documentId: docId, chunkId: weather.id, text: "lost update", expectedVersion: 1 }));
      expect(stale.code).toBe(Code.FailedPrecondition);
      expect(stale.rawMessage).toMatch(/version 2, not 1/);
      const again = await client.editChunk({ documentId: docId, chunkId: weather.id, text: `${text} Visibility was good.`, expectedVersion: 2 });
      expect(again.chunk).toMatchObject({ version: 3, originalText: weather.text });
    });

    it("refuses an empty text, a text longer than the base's chunks, and a chunk of another document", async () => {
      const ships = find("Marigold");
      expect((await failure(() => client.editChunk({ documentId: docId, chunkId: ships.id, text: "   " }))).code).toBe(Code.InvalidArgument);
      const long = await failure(() => client.editChunk({ documentId: docId, chunkId: ships.id, text: `${SHIPS} `.repeat(6) }));
      expect(long.code).toBe(Code.InvalidArgument);
      expect(long.rawMessage).toMatch(/longer than one chunk of knowledge base .* \(at most 60 tokens/);
      const other = (await upload(client, kbName, "other.txt", bytes("A separate note about the tide tables."))).document!.id;
      await watchAll(client, [other]);
      const wrong = await failure(() => client.editChunk({ documentId: other, chunkId: ships.id, text: "moved" }));
      expect(wrong.code).toBe(Code.NotFound);
      expect((await failure(() => client.addChunk({ documentId: "doc_00000000000000000000000000000000", text: "x" }))).code).toBe(Code.NotFound);
      expect((await client.listDocumentChunks({ documentId: docId })).chunks.find((c) => c.id === ships.id)?.text).toBe(ships.text);
      await client.deleteDocument({ documentId: other });
    });

    it("disables a chunk out of search while it stays listed, and enables it again", async () => {
      const ships = find("Marigold");
      const off = await client.setChunkEnabled({ documentId: docId, chunkId: ships.id, enabled: false });
      expect(off.chunk?.disabled).toBe(true);
      expect(await hitsFor("schooner marigold")).toEqual([]);
      expect((await hitsFor(SHIPS, RetrievalMode.VECTOR)).map((h) => h.chunk?.id)).not.toContain(ships.id);
      expect((await client.listDocumentChunks({ documentId: docId })).chunks.find((c) => c.id === ships.id)?.disabled).toBe(true);
      // Nor is it merged into a neighbour's context.
      const lamp = find("paraffin");
      const [lampHit] = (await client.search({ query: "paraffin reservoir", knowledgeBases: [kbName], settings: { mode: RetrievalMode.BM25, topK: 1, neighbourChunks: 1 } })).hits;
      expect(lampHit.chunk?.id).toBe(lamp.id);
      expect(lampHit.explain?.mergedChunkIds).not.toContain(ships.id);
      expect(lampHit.chunk?.text).not.toContain("Marigold");
      // The retrieval debugger says why search cannot find it.
      const { report } = await client.debugRetrieval({ query: "schooner marigold", knowledgeBases: [kbName], expect: { chunkId: ships.id } });
      expect(report?.chunks[0]?.verdict).toBe("not searchable: the chunk is disabled (a hand correction in log.md; enable it to search it)");
      await client.setChunkEnabled({ documentId: docId, chunkId: ships.id, enabled: true });
      expect((await hitsFor("schooner marigold")).map((h) => h.chunk?.id)).toEqual([ships.id]);
    });

    it("adds a chunk written by hand after the document's last one, searchable at once", async () => {
      const last = Math.max(...chunks.map((c) => c.index));
      const text = "The foghorn is tested every Sunday at noon, and its compressor oiled.";
      const { chunk } = await client.addChunk({ documentId: docId, text, sectionPath: ["Station log", "Notes"] });
      expect(chunk).toMatchObject({ documentId: docId, index: last + 1, manual: true, edited: false, version: 1, text, sectionPath: ["Station log", "Notes"] });
      expect((await hitsFor("foghorn compressor")).map((h) => [h.chunk?.id, h.fileName])).toEqual([[chunk!.id, "log.md"]]);
      expect((await hitsFor(text, RetrievalMode.VECTOR))[0].chunk?.id).toBe(chunk!.id);
    });

    it("keeps every edit, disable and added chunk through a restart", async () => {
      // The ships chunk edited and the lamp chunk disabled too, for the re-ingest below.
      await client.editChunk({ documentId: docId, chunkId: find("Marigold").id, text: SHIPS.replace("Marigold", "Marigold (Captain Rowe)") });
      await client.setChunkEnabled({ documentId: docId, chunkId: find("paraffin").id, enabled: false });
      const before = (await client.listDocumentChunks({ documentId: docId })).chunks;
      await quarry.stop({ keepData: true });
      quarry = await startEmbeddedQuarry({ env: space.env, dataDir: quarry.dataDir });
      client = quarry.client;
      const after = (await client.listDocumentChunks({ documentId: docId })).chunks;
      expect(after).toEqual(before);
      expect(after.filter((c) => c.edited).length).toBe(2);
      expect((await hitsFor("zephyrine")).map((h) => h.chunk?.id)).toEqual([find("north-westerly").id]);
      expect((await hitsFor("Captain Rowe")).map((h) => h.chunk?.id)).toEqual([find("Marigold").id]);
      expect(await hitsFor("paraffin reservoir")).toEqual([]);
    }, 120_000);

    it("re-ingests a changed file: keeps the edits whose original text is unchanged, drops the others and says so", async () => {
      const reworded = "The keeper logged a strong southerly wind at dawn, with spray over the gallery and the barometer falling.";
      expect((await upload(client, kbName, "log.md", bytes(logFile(reworded)))).document?.id).toBe(docId);
      const log = await watchAll(client, [docId]);
      const done = lastUpdate(log, docId);
      expect(done.status, done.error).toBe(DocumentStatus.READY);
      // Kept with the version: the watch may have ended on the catalog's ready before the event's message.
      const opened = await client.listDocumentChunks({ documentId: docId });
      expect(opened.document?.chunkEdits).toMatch(/^kept 1 edited, 1 disabled, 1 manual chunk\(s\); dropped 1 edit\(s\) whose original text is not in this version: #\d+ \(edited: "The keeper logged a zephyrine breeze at/);
      expect((await client.getDocument({ documentId: docId })).document?.chunkEdits).toBe(opened.document?.chunkEdits);

      const now = opened.chunks;
      const weather = now.find((c) => c.sectionPath.includes("Weather"))!;
      expect(weather).toMatchObject({ edited: false, version: 1 });
      expect(weather.text).toContain(reworded);
      expect(now.find((c) => c.sectionPath.includes("Ships"))).toMatchObject({ text: SHIPS.replace("Marigold", "Marigold (Captain Rowe)"), edited: true, originalText: find("Marigold").text });
      expect(now.find((c) => c.sectionPath.includes("Lamp"))).toMatchObject({ text: find("paraffin").text, disabled: true });
      expect(now.at(-1)).toMatchObject({ manual: true, index: Math.max(...now.map((c) => c.index)) });
      expect(await hitsFor("zephyrine")).toEqual([]);
      expect((await hitsFor("Captain Rowe")).map((h) => h.chunk?.documentId)).toEqual([docId]);
      expect((await hitsFor("foghorn")).map((h) => h.chunk?.documentId)).toEqual([docId]);
    }, 180_000);
  });
}

chunkEditSuite("embedded, SQLite", () => ({ env: {}, cleanup: async () => {} }));

describeWithEngine("OPENSEARCH_URL", "chunk edits embedded on OpenSearch", (url) => {
  chunkEditSuite("embedded, OpenSearch", () => {
    const prefix = `quarry-chunkedit-${randomBytes(4).toString("hex")}`;
    return { env: { OPENSEARCH_URL: url, QUARRY_OPENSEARCH_PREFIX: prefix }, cleanup: () => deleteOpenSearchNamespace(url, prefix) };
  });
});

describeWithEngine("ELASTICSEARCH_URL", "chunk edits embedded on Elasticsearch", (url) => {
  chunkEditSuite("embedded, Elasticsearch", () => {
    const space = elasticsearchTestSpace(url);
    return { env: { ELASTICSEARCH_URL: url, QUARRY_ELASTICSEARCH_PREFIX: space.prefix.replace(/-$/, "") }, cleanup: () => space.cleanup() };
  });
});
