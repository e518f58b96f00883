// ListEmbeddingModels, what the console's "new knowledge base" form offers: the local catalog and the
// deployment's default, and an OpenAI-compatible endpoint's models listed first, the default first;
// a base can name any of them and move between them.
import { afterAll, describe, expect, it } from "vitest";
import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { upload, watchAll } from "./e2e-helpers.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";

const started: EmbeddedQuarryFixture[] = [];
let stub: OpenAiStub | undefined;
afterAll(async () => {
  for (const quarry of started) await quarry.stop();
  await stub?.close();
});

describe("ListEmbeddingModels", () => {
  it("lists the local catalog with the default a base gets when it names none", async () => {
    const quarry = await startEmbeddedQuarry();
    started.push(quarry);
    const { models, defaultModel } = await quarry.client.listEmbeddingModels({});
    expect(defaultModel).toBe("all-MiniLM-L6-v2-int8");
    expect(models.map((m) => m.name)).toEqual(expect.arrayContaining(["all-MiniLM-L6-v2-int8", "bge-small-en-v1.5", "bge-small-zh-v1.5"]));
    expect(models.find((m) => m.name === "bge-small-zh-v1.5")).toMatchObject({ dimension: 512, maxInputTokens: 512 });
    // What the list says a base gets is what a base created without a model gets.
    const kb = (await quarry.client.createKnowledgeBase({ name: "no-model-named" })).knowledgeBase!;
    expect(kb.embeddingModel).toBe(defaultModel);
  }, 120_000);

  it("puts the embedding endpoint's model first when the deployment embeds through one", async () => {
    stub = await startOpenAiStub({ embeddingDimension: 64 });
    const quarry = await startEmbeddedQuarry({
      env: { QUARRY_EMBEDDING_PROVIDER: "openai", QUARRY_EMBEDDING_BASE_URL: stub.url, QUARRY_EMBEDDING_MODEL: "stub-embedding", QUARRY_EMBEDDING_DIMENSION: "64" },
    });
    started.push(quarry);
    const { models, defaultModel } = await quarry.client.listEmbeddingModels({});
    expect(defaultModel).toBe("stub-embedding");
    expect(models[0]).toMatchObject({ name: "stub-embedding", dimension: 64 });
  }, 120_000);

  it("lists every model of QUARRY_EMBEDDING_MODELS, creates a base on one of them and moves it to another", async () => {
    stub ??= await startOpenAiStub({ embeddingDimension: 64 });
    const quarry = await startEmbeddedQuarry({
      env: {
        QUARRY_EMBEDDING_PROVIDER: "openai",
        QUARRY_EMBEDDING_BASE_URL: stub.url,
        QUARRY_EMBEDDING_MODEL: "stub-small",
        QUARRY_EMBEDDING_DIMENSION: "64",
        QUARRY_EMBEDDING_MODELS: "stub-small:64, stub-large:96",
        // The stub answers with as many dimensions as a request asks for.
        QUARRY_EMBEDDING_REQUEST_DIMENSIONS: "1",
      },
    });
    started.push(quarry);
    const { models, defaultModel } = await quarry.client.listEmbeddingModels({});
    expect(defaultModel).toBe("stub-small");
    expect(models.slice(0, 2).map((m) => [m.name, m.dimension])).toEqual([["stub-small", 64], ["stub-large", 96]]);

    const kb = (await quarry.client.createKnowledgeBase({ name: "on-the-large-model", embeddingModel: "stub-large" })).knowledgeBase!;
    expect([kb.embeddingModel, kb.embeddingDimension]).toEqual(["stub-large", 96]);
    const id = (await upload(quarry.client, kb.id, "canal.txt", new TextEncoder().encode("The lock keeper opens the gates at dawn."))).document!.id;
    expect((await watchAll(quarry.client, [id], 60_000)).get(id)!.at(-1)?.status).toBe(DocumentStatus.READY);

    await quarry.client.changeEmbeddingModel({ knowledgeBase: kb.id, embeddingModel: "stub-small" });
    await expect.poll(async () => (await quarry.client.getKnowledgeBase({ knowledgeBase: kb.id })).knowledgeBase?.embeddingModel, { timeout: 60_000 }).toBe("stub-small");
    const moved = (await quarry.client.getKnowledgeBase({ knowledgeBase: kb.id })).knowledgeBase!;
    expect(moved.embeddingDimension).toBe(64);
    const { hits } = await quarry.client.search({ query: "When does the lock keeper open the gates?", knowledgeBases: [kb.id] });
    expect(hits[0]?.chunk?.text).toContain("lock keeper");

    // A model the endpoint is not configured for is refused by name.
    await expect(quarry.client.createKnowledgeBase({ name: "unknown-model", embeddingModel: "stub-huge" })).rejects.toThrow(/serves stub-small, stub-large, not stub-huge/);
  }, 120_000);
});
