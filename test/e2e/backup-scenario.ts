// The scenario both backup tests (embedded, OpenSearch) run around their own backup and restore:
// a base of documents made ready before the backup, uploads that keep arriving while it runs, and
// the checks that the restored Quarry has every document that was ready, whole and usable.
import { expect } from "vitest";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { lastUpdate, upload, watchAll } from "./e2e-helpers.ts";

type CallOptions = { headers: { authorization: string } };

const READY_DOCUMENTS = 8;

const note = (i: number) => `Harbour log ${i}: the ferry number ${i} left pier ${i % 4} at ${8 + (i % 9)} o'clock with ${i * 3} passengers and a cargo of word${i}.`;

/** Base "logs" with documents made ready, and an admin key made before the backup. */
export async function seedReadyLogs(client: QuarryClient): Promise<{ chunksBefore: Map<string, number>; auth: CallOptions }> {
  await client.createKnowledgeBase({ name: "logs" });
  const readyIds: string[] = [];
  for (let i = 0; i < READY_DOCUMENTS; i++) readyIds.push((await upload(client, "logs", `log-${i}.txt`, new TextEncoder().encode(note(i)))).document!.id);
  const log = await watchAll(client, readyIds);
  for (const id of readyIds) expect(lastUpdate(log, id).status).toBe(DocumentStatus.READY);
  const chunksBefore = new Map((await client.listDocuments({ knowledgeBase: "logs" })).documents.map((d) => [d.fileName, d.chunkCount]));
  const key = await client.createApiKey({ name: "keeper", role: ApiKeyRole.ADMIN, knowledgeBases: [] });
  return { chunksBefore, auth: { headers: { authorization: `Bearer ${key.secret}` } } };
}

/** Runs `work` (the backup) while uploads keep arriving, and waits for the last upload to end. */
export async function whileUploading<T>(client: QuarryClient, auth: CallOptions, work: () => Promise<T>): Promise<T> {
  let uploading = true;
  const load = (async () => {
    for (let i = 100; uploading && i < 160; i++) await client.uploadDocument({ header: { knowledgeBase: "logs", fileName: `late-${i}.txt` }, content: new TextEncoder().encode(note(i)) }, auth);
  })();
  try {
    return await work();
  } finally {
    uploading = false;
    await load;
  }
}

/** Every document ready before the backup is ready with its chunk count, searchable and re-ingestable from its original; the key works. */
export async function expectReadyLogsRestored(restored: QuarryClient, auth: CallOptions, chunksBefore: Map<string, number>): Promise<void> {
  const docs = (await restored.listDocuments({ knowledgeBase: "logs" }, auth)).documents;
  const byName = new Map(docs.map((d) => [d.fileName, d]));
  for (let i = 0; i < READY_DOCUMENTS; i++) {
    const doc = byName.get(`log-${i}.txt`);
    expect(doc?.status, `log-${i}.txt`).toBe(DocumentStatus.READY);
    expect(doc?.chunkCount).toBe(chunksBefore.get(`log-${i}.txt`));
  }
  const { hits } = await restored.search({ knowledgeBases: ["logs"], query: "word5", settings: { mode: RetrievalMode.BM25, topK: 3 } }, auth);
  expect(hits[0]?.fileName).toBe("log-5.txt");
  const again = await restored.reingestDocument({ documentId: byName.get("log-3.txt")!.id }, auth);
  expect(again.document?.id).toBe(byName.get("log-3.txt")!.id);
}
