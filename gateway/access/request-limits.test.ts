// Fan-out limits on an embedded Quarry over HTTP: a base named 2,000 times is searched once, with the
// same hits as naming it once; too many different bases, or too many ids of anything, is
// INVALID_ARGUMENT naming the field, and a scoped key's check never sees the oversized list.
import { ConnectError, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { gatewayClient } from "../../client/gateway-client.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../../test/support/embedded-quarry.ts";
import { MAX_KNOWLEDGE_BASES, MAX_REPEATED } from "./request-limits.ts";

const refusal = (call: () => Promise<unknown>) =>
  call().then(
    () => undefined,
    (error: unknown) => ConnectError.from(error),
  );

describe("fan-out limits (embedded Quarry)", () => {
  let quarry: EmbeddedQuarryFixture;
  let kbId: string;

  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    kbId = (await quarry.client.createKnowledgeBase({ name: "fan-out" })).knowledgeBase!.id;
    const { document } = await quarry.client.uploadDocument({ header: { knowledgeBase: kbId, fileName: "tides.txt" }, content: new TextEncoder().encode("The tide turns twice a day at the harbour.") });
    let status = DocumentStatus.PENDING;
    for await (const u of quarry.client.watchIngestion({ documentIds: [document!.id] }, { timeoutMs: 60_000 })) status = u.status;
    expect(status).toBe(DocumentStatus.READY);
  }, 120_000);
  afterAll(() => quarry?.stop());

  it("searches a base named 2,000 times once, with the hits of naming it once", async () => {
    const once = await quarry.client.search({ query: "tide", knowledgeBases: ["fan-out"] });
    const repeated = await quarry.client.search({ query: "tide", knowledgeBases: Array.from({ length: 2000 }, () => "fan-out") });
    expect(once.hits.length).toBeGreaterThan(0);
    expect(repeated.hits.map((h) => h.chunk?.id)).toEqual(once.hits.map((h) => h.chunk?.id));
  });

  it("refuses more different bases than the cap, and too many ids, with INVALID_ARGUMENT naming the field", async () => {
    const names = Array.from({ length: MAX_KNOWLEDGE_BASES + 1 }, (_, i) => `base-${i}`);
    const search = await refusal(() => quarry.client.search({ query: "tide", knowledgeBases: names }));
    expect(search?.code).toBe(Code.InvalidArgument);
    expect(search?.rawMessage).toBe(`knowledge_bases names ${MAX_KNOWLEDGE_BASES + 1} different knowledge bases; a request may name at most ${MAX_KNOWLEDGE_BASES}`);
    const chat = await refusal(async () => {
      for await (const _ of quarry.client.chat({ question: "tide?", knowledgeBases: names }));
    });
    expect(chat?.code).toBe(Code.InvalidArgument);
    const ids = Array.from({ length: MAX_REPEATED + 1 }, (_, i) => `doc_${i}`);
    const watch = await refusal(async () => {
      for await (const _ of quarry.client.watchIngestion({ documentIds: ids }));
    });
    expect(watch?.code).toBe(Code.InvalidArgument);
    expect(watch?.rawMessage).toMatch(/^document_ids names 1001 different entries/);
    // Nested lists too: an assistant mounting too many bases.
    const assistant = await refusal(() =>
      quarry.client.createAssistant({ assistant: { name: "wide", knowledgeBases: names.map((knowledgeBase) => ({ knowledgeBase })) } }),
    );
    expect(assistant?.rawMessage).toMatch(/^assistant\.knowledge_bases names 65 different knowledge bases/);
  });

  it("refuses a scoped key's oversized list before its scope is checked, and de-duplicates before it is", async () => {
    const admin = (await quarry.client.createApiKey({ name: "admin", role: ApiKeyRole.ADMIN })).secret;
    const scoped = gatewayClient(quarry.url, (await gatewayClient(quarry.url, admin).createApiKey({ name: "reader", role: ApiKeyRole.READER, knowledgeBases: [kbId] })).secret);
    const repeated = await scoped.search({ query: "tide", knowledgeBases: Array.from({ length: 2000 }, () => kbId) });
    expect(repeated.hits.length).toBeGreaterThan(0);
    const wide = await refusal(() => scoped.search({ query: "tide", knowledgeBases: Array.from({ length: 500 }, (_, i) => `base-${i}`) }));
    expect(wide?.code).toBe(Code.InvalidArgument);
  });
});
