// GetCaller: a key learns its own name, role and scope (the console shows a reader no edit actions
// by it); a Quarry with no keys says it serves everyone as an admin.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient } from "../../client/gateway-client.ts";
import { ApiKeyRole } from "../../gen/quarry/common/v1/api_key_pb.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";

let quarry: EmbeddedQuarryFixture;
beforeAll(async () => {
  quarry = await startEmbeddedQuarry();
}, 120_000);
afterAll(async () => {
  await quarry?.stop();
});

describe("GetCaller", () => {
  it("says who each caller is, from open access to a scoped reader", async () => {
    expect(await quarry.client.getCaller({})).toMatchObject({ openAccess: true, role: ApiKeyRole.ADMIN, name: "", knowledgeBaseIds: [] });

    const kb = (await quarry.client.createKnowledgeBase({ name: "handbook" })).knowledgeBase!;
    const admin = (await quarry.client.createApiKey({ name: "ops", role: ApiKeyRole.ADMIN })).secret;
    const asAdmin = gatewayClient(quarry.url, admin);
    expect(await asAdmin.getCaller({})).toMatchObject({ openAccess: false, role: ApiKeyRole.ADMIN, name: "ops", knowledgeBaseIds: [] });

    const reader = (await asAdmin.createApiKey({ name: "tenant-reader", role: ApiKeyRole.READER, knowledgeBases: ["handbook"] })).secret;
    expect(await gatewayClient(quarry.url, reader).getCaller({})).toMatchObject({ openAccess: false, role: ApiKeyRole.READER, name: "tenant-reader", knowledgeBaseIds: [kb.id] });

    // Once a key exists, a caller without one is refused like any other call.
    await expect(quarry.client.getCaller({})).rejects.toMatchObject({ code: 16 });
  }, 120_000);
});
