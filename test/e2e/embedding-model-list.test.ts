// ListEmbeddingModels, what the console's "new knowledge base" form offers: the local catalog and the
// deployment's default, and an OpenAI-compatible endpoint's model listed first when it is the default.
import { afterAll, describe, expect, it } from "vitest";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
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
});
