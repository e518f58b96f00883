import { afterEach, describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError, UnavailableError } from "../../lib/errors.ts";
import { startOpenAiStub, type OpenAiStub, type OpenAiStubOptions } from "../../lib/testing/openai-stub.ts";
import { hashingVector } from "../../lib/testing/hashing-embedder.ts";
import { OpenAiEmbedder, type OpenAiEmbedderOptions } from "./openai-embedder.ts";

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

async function embedderAgainstStub(stubOptions: OpenAiStubOptions, options: Partial<OpenAiEmbedderOptions> = {}) {
  stub = await startOpenAiStub(stubOptions);
  return new OpenAiEmbedder({ baseURL: stub.url, apiKey: "sk-test", model: "text-embedding-3-small", dimension: 384, maxInputTokens: 8191, maxRetries: 0, ...options });
}

describe("OpenAiEmbedder", () => {
  it("embeds in batches by count and keeps the input order", async () => {
    const embedder = await embedderAgainstStub({ embeddingDimension: 384 }, { batchSize: 2 });
    const texts = ["alpha beta", "gamma", "delta epsilon zeta", "eta", "theta"];
    const vectors = await embedder.embed(texts, "document");
    expect(stub!.requests.map((r) => r.body.input)).toEqual([["alpha beta", "gamma"], ["delta epsilon zeta", "eta"], ["theta"]]);
    expect(stub!.requests[0].headers.authorization).toBe("Bearer sk-test");
    vectors.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(hashingVector(texts[i], 384))));
  });

  it("normalises vectors the endpoint returns unnormalised", async () => {
    const embedder = await embedderAgainstStub({ embeddingScale: 7 });
    const [v] = await embedder.embed(["one two three"], "query");
    expect(v.reduce((s, x) => s + x * x, 0)).toBeCloseTo(1, 5);
    expect(Array.from(v)).toEqual(Array.from(hashingVector("one two three", 384)).map((x) => expect.closeTo(x, 6)));
  });

  it("sends `dimensions` only when configured", async () => {
    const plain = await embedderAgainstStub({ embeddingDimension: 384 });
    await plain.embed(["x"], "query");
    expect(stub!.requests[0].body).not.toHaveProperty("dimensions");
    await stub!.close();

    const shortened = await embedderAgainstStub({ embeddingDimension: 1536 }, { dimension: 256, requestDimensions: true });
    const [v] = await shortened.embed(["x"], "query");
    expect(stub!.requests[0].body.dimensions).toBe(256);
    expect(v).toHaveLength(256);
  });

  it("says whether a text is a question or a passage only when configured", async () => {
    const plain = await embedderAgainstStub({ embeddingDimension: 384 });
    await plain.embed(["x"], "query");
    expect(stub!.requests[0].body).not.toHaveProperty("input_type");
    await stub!.close();
    const typed = await embedderAgainstStub({ embeddingDimension: 384 }, { sendInputType: true });
    await typed.embed(["a question"], "query");
    await typed.embed(["a passage"], "document");
    expect(stub!.requests.map((r) => r.body.input_type)).toEqual(["query", "document"]);
  });

  it("refuses vectors of another dimension than configured", async () => {
    const embedder = await embedderAgainstStub({ embeddingDimension: 768 }, { dimension: 384 });
    const error = await embedder.embed(["x"], "document").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FailedPreconditionError);
    expect((error as Error).message).toMatch(/768-dim.*384/);
  });

  it("maps a 4xx to InvalidInputError carrying the provider's message", async () => {
    const embedder = await embedderAgainstStub({});
    const error = await embedder.embed([""], "document").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain("empty strings are not allowed");
  });

  it("maps a 5xx to UnavailableError", async () => {
    const embedder = await embedderAgainstStub({ fail: () => ({ status: 503, message: "overloaded" }) });
    const error = await embedder.embed(["x"], "document").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toContain("overloaded");
  });

  it("maps a bad key to FailedPreconditionError", async () => {
    const embedder = await embedderAgainstStub({ fail: () => ({ status: 401, message: "Incorrect API key provided" }) });
    const error = await embedder.embed(["x"], "document").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FailedPreconditionError);
    expect((error as Error).message).toContain("Incorrect API key provided");
  });

  it("maps an unreachable endpoint to UnavailableError", async () => {
    stub = await startOpenAiStub();
    const url = stub.url;
    await stub.close();
    stub = undefined;
    const embedder = new OpenAiEmbedder({ baseURL: url, apiKey: "k", model: "m", dimension: 384, maxInputTokens: 512, maxRetries: 0 });
    await expect(embedder.embed(["x"], "document")).rejects.toBeInstanceOf(UnavailableError);
  });
});
