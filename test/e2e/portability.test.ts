// Export and import of a knowledge base end to end, over HTTP through the gateway (docs/PORTABILITY.md):
// a base ingested on embedded SQLite is exported (streamed), imported under another name on the same
// Quarry without vectors (its chunks embedded again) and, with its vectors, into a Quarry on
// OpenSearch and one on Elasticsearch when they are there (and back); each import answers the same searches with the same chunks, carries
// a disabled document and a failed one as they were, and a corrupt, a truncated, a foreign-model
// and a scoped-key import are refused with their reason and leave no base behind.
import { randomBytes } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { elasticsearchTestSpace } from "../../services/index/testing/elasticsearch-test-support.ts";
import { fixtureBytes } from "../fixtures/fixture-documents.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { failure, lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const FILES: Record<string, string> = {
  "lighthouse.md": "# Lighthouse\n\nThe keeper trims the wick at dusk and logs every ship that clears the reef.\n\n## Lens\n\nThe Fresnel lens is polished each morning with a soft cloth.",
  "tides.txt": "Tide tables for the northern harbour: high water at 06:12 and 18:40, low water at 00:05 and 12:30.",
  "ferry.txt": "The ferry to the island leaves at nine from pier four and returns at five in the afternoon.",
};
const QUERIES = ["when is high water", "polishing the lens", "ferry departure pier", "ships passing the reef"];

/** A call's headers: a key's bearer secret, or none. */
const as = (secret?: string) => (secret ? { headers: { authorization: `Bearer ${secret}` } } : {});

async function exportBytes(client: QuarryClient, kb: string, withoutVectors = false, secret?: string): Promise<Buffer> {
  const pieces: Uint8Array[] = [];
  for await (const piece of client.exportKnowledgeBase({ knowledgeBase: kb, withoutVectors }, as(secret))) pieces.push(piece.data);
  return Buffer.concat(pieces);
}

async function importStreamed(client: QuarryClient, archive: Uint8Array, name: string, secret?: string) {
  async function* parts() {
    yield { part: { case: "options" as const, value: { name } } };
    // Small pieces, so the archive crosses many messages.
    for (let at = 0; at < archive.byteLength; at += 1000) yield { part: { case: "data" as const, value: archive.subarray(at, at + 1000) } };
  }
  return client.importKnowledgeBaseStream(parts(), as(secret));
}

/**
 * Each query's hits as score, file, chunk index and text, in rank order: what must survive a move.
 * Hits of equal score are put in text order, since ties fall back on chunk ids, which an import
 * names anew (they hash the new base's document ids).
 */
async function answers(client: QuarryClient, kb: string, mode: RetrievalMode) {
  const out: string[][] = [];
  for (const query of QUERIES) {
    const { hits } = await client.search({ knowledgeBases: [kb], query, settings: { mode, topK: 10 } });
    const rows = hits.map((h) => ({ score: h.score.toFixed(4), hit: `${h.fileName}#${h.chunk!.index}:${h.chunk!.text}` }));
    rows.sort((a, b) => Number(b.score) - Number(a.score) || a.hit.localeCompare(b.hit));
    out.push(rows.map((r) => `${r.score} ${r.hit}`));
  }
  return out;
}

/** The archive with its header rewritten (a foreign model) and gzipped again. */
function withHeader(archive: Buffer, change: (header: Record<string, unknown>) => void): Buffer {
  const lines = gunzipSync(archive).toString("utf8").split("\n");
  const header = JSON.parse(lines[0]) as Record<string, unknown>;
  change(header);
  lines[0] = JSON.stringify(header);
  return gzipSync(Buffer.from(lines.join("\n")));
}

describe("export and import of a knowledge base (embedded, SQLite)", () => {
  let quarry: EmbeddedQuarryFixture;
  let client: QuarryClient;
  const name = `port-${randomBytes(3).toString("hex")}`;
  let archive: Buffer;
  let before: { hybrid: string[][]; bm25: string[][] };
  const baseNames = async () => (await client.listKnowledgeBases({})).knowledgeBases.map((k) => k.name);

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    client = quarry.client;
    await client.createKnowledgeBase({ name, description: "harbour notes", chunking: { chunkSize: 40, chunkOverlap: 5 } });
    const ids: string[] = [];
    for (const [file, text] of Object.entries(FILES)) {
      ids.push((await upload(client, name, file, new TextEncoder().encode(text))).document!.id);
    }
    // A PDF cut off after its first kilobytes passes the upload's reading rule and fails in the parser
    // with its reason, which the archive carries.
    const truncated = (await fixtureBytes("lighthouses.pdf")).subarray(0, 6_000);
    ids.push((await client.uploadDocument({ header: { knowledgeBase: name, fileName: "minutes.pdf", metadata: { source: "scan" } }, content: truncated })).document!.id);
    const log = await watchAll(client, ids);
    for (const id of ids.slice(0, 3)) expect(lastUpdate(log, id).status, lastUpdate(log, id).error).toBe(DocumentStatus.READY);
    expect(lastUpdate(log, ids[3]).status).toBe(DocumentStatus.FAILED);
    await client.setDocumentEnabled({ documentId: ids[2], enabled: false });
    before = { hybrid: await answers(client, name, RetrievalMode.HYBRID), bm25: await answers(client, name, RetrievalMode.BM25) };
    expect(before.hybrid.flat().length).toBeGreaterThan(0);
    archive = await exportBytes(client, name);
  }, 300_000);
  afterAll(async () => quarry?.stop());

  it("streams an archive that starts as gzip and names its format and version", () => {
    const lines = gunzipSync(archive).toString("utf8").trim().split("\n");
    expect(JSON.parse(lines[0])).toMatchObject({ format: "quarry.knowledge-base-archive", version: 1, vectors: true, knowledgeBase: { name, description: "harbour notes" } });
    expect(lines).toHaveLength(2 + 4);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ end: true, documents: 4 });
  });

  it("imports without vectors under another name: chunks embedded again, same answers, statuses kept", async () => {
    const light = await exportBytes(client, name, true);
    expect(light.byteLength).toBeLessThan(archive.byteLength);
    const copy = `${name}-copy`;
    const res = await importStreamed(client, light, copy);
    expect(res).toMatchObject({ documents: 4, reembedded: true });
    expect(res.knowledgeBase?.name).toBe(copy);
    expect(await answers(client, copy, RetrievalMode.HYBRID)).toEqual(before.hybrid);
    expect(await answers(client, copy, RetrievalMode.BM25)).toEqual(before.bm25);
    const docs = (await client.listDocuments({ knowledgeBase: copy })).documents;
    const byName = new Map(docs.map((d) => [d.fileName, d]));
    expect(byName.get("ferry.txt")?.enabled).toBe(false);
    expect(byName.get("minutes.pdf")).toMatchObject({ status: DocumentStatus.FAILED, metadata: { source: "scan" } });
    expect(byName.get("minutes.pdf")!.errorMessage).not.toBe("");
    expect(byName.get("tides.txt")).toMatchObject({ status: DocumentStatus.READY, enabled: true });
  });

  it("imports through the one-message form (the console's) with the archive's vectors", async () => {
    const copy = `${name}-console`;
    const res = await client.importKnowledgeBase({ options: { name: copy }, archive });
    expect(res).toMatchObject({ documents: 4, reembedded: false });
    expect(await answers(client, copy, RetrievalMode.HYBRID)).toEqual(before.hybrid);
  });

  it("refuses a taken name", async () => {
    expect((await failure(() => importStreamed(client, archive, name))).code).toBe(Code.AlreadyExists);
  });

  it("refuses a corrupt archive and leaves no base behind", async () => {
    const corrupt = Buffer.from(archive);
    corrupt[Math.floor(corrupt.byteLength / 2)] ^= 0xff;
    const error = await failure(() => importStreamed(client, corrupt, `${name}-corrupt`));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/archive is (corrupt|truncated)/);
    expect(await baseNames()).not.toContain(`${name}-corrupt`);
  });

  it("refuses an archive whose contents were edited after it was written (checksum)", async () => {
    const text = gunzipSync(archive).toString("utf8");
    expect(text).toContain("Tide tables");
    const error = await failure(() => importStreamed(client, gzipSync(Buffer.from(text.replace("Tide tables", "Tyde tables"))), `${name}-edited`));
    expect(error.rawMessage).toContain("checksum does not match");
    expect(await baseNames()).not.toContain(`${name}-edited`);
  });

  it("refuses a truncated archive and leaves no base behind", async () => {
    const error = await failure(() => importStreamed(client, archive.subarray(0, Math.floor(archive.byteLength * 0.8)), `${name}-cut`));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain("archive is truncated");
    expect(await baseNames()).not.toContain(`${name}-cut`);
  });

  it("refuses an archive of a model this Quarry does not have, or of another dimension", async () => {
    const foreign = withHeader(archive, (h) => ((h.knowledgeBase as Record<string, unknown>).embeddingModel = "no-such-model"));
    const error = await failure(() => importStreamed(client, foreign, `${name}-foreign`));
    expect(error.code).toBe(Code.FailedPrecondition);
    expect(error.rawMessage).toContain("no-such-model");
    const resized = withHeader(archive, (h) => ((h.knowledgeBase as Record<string, unknown>).embeddingDimension = 768));
    expect((await failure(() => importStreamed(client, resized, `${name}-768`))).rawMessage).toContain("768 dimensions");
    expect(await baseNames()).not.toContain(`${name}-foreign`);
  });

  it("refuses a file that is not an archive, and an archive of a newer version", async () => {
    expect((await failure(() => importStreamed(client, gzipSync(Buffer.from('{"hello":1}\n')), `${name}-x`))).rawMessage).toContain("not a Quarry knowledge-base archive");
    const newer = withHeader(archive, (h) => (h.version = 99));
    expect((await failure(() => importStreamed(client, newer, `${name}-x`))).rawMessage).toContain("version 99");
  });

  /**
   * Into a Quarry on another backend and back: the archive's vectors answer the same vector searches
   * there, and where the backend's BM25 agrees with SQLite's (OpenSearch stems, the Elasticsearch
   * dialect does not) the same hybrid ones; its own export comes back to SQLite with the same answers.
   */
  const intoBackend = (label: string, start: () => Promise<{ target: EmbeddedQuarryFixture; cleanup(): Promise<void> }>, sameBm25: boolean) => {
    let target: EmbeddedQuarryFixture | undefined;
    let cleanup: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      ({ target, cleanup } = await start());
    }, 120_000);
    afterAll(async () => {
      await target?.stop();
      await cleanup?.();
    });

    it(`imports the SQLite base's archive into ${label} with its vectors and answers with the same chunks`, async () => {
      const there = target!.client;
      const res = await importStreamed(there, archive, name);
      expect(res).toMatchObject({ documents: 4, reembedded: false });
      expect(await answers(there, name, RetrievalMode.VECTOR)).toEqual(await answers(client, name, RetrievalMode.VECTOR));
      if (sameBm25) expect(await answers(there, name, RetrievalMode.HYBRID)).toEqual(before.hybrid);
      const docs = (await there.listDocuments({ knowledgeBase: name })).documents;
      expect(docs.find((d) => d.fileName === "ferry.txt")?.enabled).toBe(false);
      const again = await exportBytes(there, name);
      const back = `${name}-from-${label.replace(/\W+/g, "-").toLowerCase()}`;
      await importStreamed(client, again, back);
      expect(await answers(client, back, RetrievalMode.HYBRID)).toEqual(before.hybrid);
    }, 120_000);
  };

  describeWithEngine("OPENSEARCH_URL", "into a Quarry on OpenSearch", (opensearchUrl) => {
    intoBackend("OpenSearch", async () => {
      const prefix = `quarry-port-${randomBytes(4).toString("hex")}`;
      const target = await startEmbeddedQuarry({ env: { OPENSEARCH_URL: opensearchUrl, QUARRY_OPENSEARCH_PREFIX: prefix } });
      return { target, cleanup: () => deleteOpenSearchNamespace(opensearchUrl, prefix) };
    }, true);
  });

  describeWithEngine("ELASTICSEARCH_URL", "into a Quarry on Elasticsearch", (elasticsearchUrl) => {
    intoBackend("Elasticsearch", async () => {
      const space = elasticsearchTestSpace(elasticsearchUrl);
      const target = await startEmbeddedQuarry({ env: { ELASTICSEARCH_URL: elasticsearchUrl, QUARRY_ELASTICSEARCH_PREFIX: space.prefix.replace(/-$/, "") } });
      return { target, cleanup: () => space.cleanup() };
    }, false);
  });

  // Last: once a key exists, this Quarry answers no call without one.
  it("lets a reader key export a base in its scope, and refuses a scoped key's import", async () => {
    const admin = (await client.createApiKey({ name: "admin", role: ApiKeyRole.ADMIN, knowledgeBases: [] })).secret;
    const reader = (await client.createApiKey({ name: "reader", role: ApiKeyRole.READER, knowledgeBases: [name] }, as(admin))).secret;
    const scopedEditor = (await client.createApiKey({ name: "scoped-editor", role: ApiKeyRole.EDITOR, knowledgeBases: [name] }, as(admin))).secret;
    expect((await exportBytes(client, name, false, reader)).byteLength).toBeGreaterThan(0);
    // A base out of the key's scope reads as missing (gateway/access/scope.ts).
    expect((await failure(() => exportBytes(client, `${name}-console`, false, reader))).code).toBe(Code.NotFound);
    expect((await failure(() => importStreamed(client, archive, `${name}-r`, reader))).code).toBe(Code.PermissionDenied);
    expect((await failure(() => importStreamed(client, archive, `${name}-s`, scopedEditor))).code).toBe(Code.PermissionDenied);
    expect((await importStreamed(client, archive, `${name}-by-admin`, admin)).documents).toBe(4);
  });
});
