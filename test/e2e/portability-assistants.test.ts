// Assistants and their managed corrections in a knowledge-base archive (docs/PORTABILITY.md,
// "Assistants and corrections"), end to end through the gateway: an assistant over a base on
// embedded SQLite, with a second mount and a correction, is exported with the base, imported into
// a Quarry on OpenSearch (when OPENSEARCH_URL is set) and back into SQLite beside the original
// (its name then takes the new base's name), and answers the corrected question from the
// correction there; an import that fails part way, or whose names are all taken, makes nothing.
import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { describeWithEngine } from "../support/engines.ts";
import { collectChat, failure, lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

const MANUAL = `# Skerry lighthouse manual

The lamp of the Skerry lighthouse is serviced every 30 days by the harbour crew, who replace the bulb and clean the lens.

The tower was painted white in 1921, after the storm that took the old red paint off.
`;
const QUESTION = "How often is the lighthouse lamp serviced?";
const CORRECTED = "The lamp is serviced every 14 days since the 2024 maintenance contract.";
const suffix = randomBytes(3).toString("hex");
const KB = `skerry-${suffix}`;
const FORUM = `forum-${suffix}`;
const KEEPER = `keeper-${suffix}`;
const SETTINGS = {
  description: "answers the keepers' questions",
  systemPrompt: "Answer like a lighthouse keeper.",
  hideFileNames: true,
  retrieval: { mode: RetrievalMode.HYBRID, topK: 6 },
};

const as = (secret?: string) => (secret ? { headers: { authorization: `Bearer ${secret}` } } : {});

async function exportBytes(client: QuarryClient, kb: string, withAssistants: boolean, secret?: string): Promise<Buffer> {
  const pieces: Uint8Array[] = [];
  for await (const piece of client.exportKnowledgeBase({ knowledgeBase: kb, withAssistants }, as(secret))) pieces.push(piece.data);
  return Buffer.concat(pieces);
}

async function importArchive(client: QuarryClient, archive: Uint8Array, name: string) {
  async function* parts() {
    yield { part: { case: "options" as const, value: { name } } };
    for (let at = 0; at < archive.byteLength; at += 4096) yield { part: { case: "data" as const, value: archive.subarray(at, at + 4096) } };
  }
  return client.importKnowledgeBaseStream(parts());
}

const archiveLines = (archive: Buffer) =>
  gunzipSync(archive)
    .toString("utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** What an imported assistant must show: the settings, one mount of the new base, its corrections answering first. */
async function expectImportedKeeper(client: QuarryClient, res: Awaited<ReturnType<typeof importArchive>>, name: string, turnId: string, notes = [expect.stringContaining(`mount of the knowledge base ${FORUM}`)]) {
  expect(res.assistants.map((a) => a.name)).toEqual([name]);
  expect(res.corrections).toBe(1);
  expect(res.notes).toEqual(notes);
  const assistant = (await client.getAssistant({ assistant: name })).assistant!;
  expect(assistant.id).toBe(res.assistants[0].id);
  expect(assistant).toMatchObject({ ...SETTINGS, retrieval: expect.objectContaining(SETTINGS.retrieval) });
  expect(assistant.knowledgeBases.map((m) => [m.knowledgeBase, m.topK, m.priority])).toEqual([[res.knowledgeBase!.id, 5, 10]]);
  const bases = (await client.listKnowledgeBases({})).knowledgeBases;
  const corrections = bases.find((b) => b.id === assistant.correctionsKnowledgeBaseId)!;
  expect(corrections).toMatchObject({ name: `${name} · corrections`, correctionsForAssistantId: assistant.id });
  const listed = (await client.listCorrections({ assistant: name })).corrections;
  expect(listed.map((c) => [c.turnId, c.assistantId, c.correctedAnswer, c.document!.status])).toEqual([[turnId, assistant.id, CORRECTED, DocumentStatus.READY]]);
  const answer = await collectChat(client, { question: QUESTION, assistant: name });
  expect(answer.citations[0].fileName).toBe(`correction-${turnId}.txt`);
  expect(answer.text).toContain(CORRECTED);
  expect(answer.final.correctionsUsed).toEqual([listed[0].id]);
}

describe("assistants and corrections in a knowledge-base archive (embedded, SQLite)", () => {
  let quarry: EmbeddedQuarryFixture;
  let client: QuarryClient;
  let turnId = "";
  let archive: Buffer;

  const names = async () => ({
    bases: (await client.listKnowledgeBases({})).knowledgeBases.map((b) => b.name).sort(),
    assistants: (await client.listAssistants({})).assistants.map((a) => a.name).sort(),
  });

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    client = quarry.client;
    await client.createKnowledgeBase({ name: KB });
    await client.createKnowledgeBase({ name: FORUM });
    const ids = [
      (await upload(client, KB, "skerry-manual.md", new TextEncoder().encode(MANUAL))).document!.id,
      (await upload(client, FORUM, "thread.txt", new TextEncoder().encode("Keepers on the forum swap stories about storms."))).document!.id,
    ];
    const log = await watchAll(client, ids);
    for (const id of ids) expect(lastUpdate(log, id).status).toBe(DocumentStatus.READY);
    await client.createAssistant({
      assistant: { name: KEEPER, ...SETTINGS, knowledgeBases: [{ knowledgeBase: KB, topK: 5, priority: 10 }, { knowledgeBase: FORUM, topK: 3, priority: 1 }] },
    });
    for await (const { event } of client.chat({ question: QUESTION, assistant: KEEPER })) if (event?.event.case === "started") turnId = event.event.value.turnId;
    const correction = (await client.correctAnswer({ turnId, correctedAnswer: CORRECTED })).correction!;
    expect(lastUpdate(await watchAll(client, [correction.id]), correction.id).status).toBe(DocumentStatus.READY);
    archive = await exportBytes(client, KB, true);
  }, 300_000);
  afterAll(async () => quarry?.stop());

  it("writes the assistant, its mount of the base and its correction; the mount of another base is named in the manifest", () => {
    const [header, ...rest] = archiveLines(archive);
    expect(header).toMatchObject({ version: 2, knowledgeBase: { name: KB } });
    const [entry] = header.assistants as Array<Record<string, Record<string, unknown>>>;
    expect(entry.assistant).toMatchObject({ name: KEEPER, systemPrompt: SETTINGS.systemPrompt, hideFileNames: true });
    expect(entry.assistant.id).toBeUndefined();
    expect(entry.mount).toEqual({ topK: 5, priority: 10 });
    expect(entry.corrections).toMatchObject({ knowledgeBase: { name: `${KEEPER} · corrections` }, documents: 1 });
    expect(header.manifest).toEqual([`the assistant ${KEEPER}'s mount of the knowledge base ${FORUM} (top-k 3, priority 1) was left out: the archive does not hold that base`]);
    const documents = rest.slice(0, -1);
    expect(documents.map((d) => [d.fileName, d.correctionsOf])).toEqual([
      ["skerry-manual.md", undefined],
      [`correction-${turnId}.txt`, 0],
    ]);
    expect(rest.at(-1)).toMatchObject({ end: true, documents: 2 });
  });

  it("writes a version-1 archive without assistants unless asked", async () => {
    const [header] = archiveLines(await exportBytes(client, KB, false));
    expect(header.version).toBe(1);
    expect(header.assistants).toBeUndefined();
  });

  describeWithEngine("OPENSEARCH_URL", "into a Quarry on OpenSearch and back", (opensearchUrl) => {
    let target: EmbeddedQuarryFixture | undefined;
    const prefix = `quarry-port-as-${randomBytes(4).toString("hex")}`;
    beforeAll(async () => {
      target = await startEmbeddedQuarry({ env: { OPENSEARCH_URL: opensearchUrl, QUARRY_OPENSEARCH_PREFIX: prefix } });
    }, 120_000);
    afterAll(async () => {
      await target?.stop();
      await deleteOpenSearchNamespace(opensearchUrl, prefix);
    });

    it("makes the assistant again over the imported base there, answering from its correction; its export comes back to SQLite", async () => {
      const there = target!.client;
      const res = await importArchive(there, archive, KB);
      expect(res).toMatchObject({ documents: 1, reembedded: false });
      await expectImportedKeeper(there, res, KEEPER, turnId);

      const back = `${KB}-from-opensearch`;
      const home = await importArchive(client, await exportBytes(there, KB, true), back);
      // KEEPER is taken here (the original): the copy takes the new base's name. The copy there
      // mounted only the base, so this archive left nothing out.
      await expectImportedKeeper(client, home, `${KEEPER} (${back})`, turnId, []);
    }, 300_000);
  });

  it("beside the original on the same Quarry, names the copy after the new base", async () => {
    const copy = `${KB}-copy`;
    await expectImportedKeeper(client, await importArchive(client, archive, copy), `${KEEPER} (${copy})`, turnId);
    // The original is untouched: its mounts, its corrections.
    const original = (await client.getAssistant({ assistant: KEEPER })).assistant!;
    expect(original.knowledgeBases).toHaveLength(2);
    expect((await client.listCorrections({ assistant: KEEPER })).corrections).toHaveLength(1);
  }, 120_000);

  it("refuses names all taken, and a truncated archive, making nothing", async () => {
    const before = await names();
    const third = `${KB}-third`;
    await client.createAssistant({ assistant: { name: `${KEEPER} (${third})`, knowledgeBases: [{ knowledgeBase: FORUM }] } });
    const taken = await failure(() => importArchive(client, archive, third));
    expect(taken.code).toBe(Code.AlreadyExists);
    expect(taken.rawMessage).toContain(`assistants named ${KEEPER} and ${KEEPER} (${third}) exist here already`);
    await client.deleteAssistant({ assistant: `${KEEPER} (${third})` });

    // Cut near its end: the base and the corrections base are made before the cut is read, and deleted again.
    const cut = await failure(() => importArchive(client, archive.subarray(0, archive.byteLength - 200), third));
    expect(cut.code).toBe(Code.InvalidArgument);
    expect(cut.rawMessage).toContain("archive is truncated");
    expect(await names()).toEqual(before);
  }, 120_000);

  // Last: once a key exists, this Quarry answers no call without one.
  it("lets only a key without a scope export assistants", async () => {
    const admin = (await client.createApiKey({ name: "admin", role: ApiKeyRole.ADMIN, knowledgeBases: [] })).secret;
    const scoped = (await client.createApiKey({ name: "scoped-reader", role: ApiKeyRole.READER, knowledgeBases: [KB] }, as(admin))).secret;
    const refused = await failure(() => exportBytes(client, KB, true, scoped));
    expect(refused.code).toBe(Code.PermissionDenied);
    expect(refused.rawMessage).toContain("assistants reach beyond them");
    expect((await exportBytes(client, KB, false, scoped)).byteLength).toBeGreaterThan(0);
    expect(archiveLines(await exportBytes(client, KB, true, admin))[0].version).toBe(2);
  });
});
