import { afterEach, describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError, UnavailableError } from "../../../lib/errors.ts";
import { startOpenAiStub, type OpenAiStub, type OpenAiStubOptions } from "../../../lib/testing/openai-stub.ts";
import type { ChatUsage } from "./chat-model.ts";
import { OpenAiChatModel } from "./openai-chat-model.ts";

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

async function modelAgainstStub(options: OpenAiStubOptions) {
  stub = await startOpenAiStub(options);
  return new OpenAiChatModel({ baseURL: stub.url, apiKey: "sk-test", model: "gpt-test", maxRetries: 0 });
}

async function collect(model: OpenAiChatModel, content = "Hi") {
  const deltas: string[] = [];
  let usage: ChatUsage | undefined;
  for await (const d of model.stream([{ role: "user", content }], { onUsage: (u) => (usage = u) })) deltas.push(d);
  return { deltas, usage };
}

describe("OpenAiChatModel", () => {
  it("streams the reply in deltas and reports usage from the final chunk", async () => {
    const model = await modelAgainstStub({ reply: () => "Hello there, friend." });
    const { deltas, usage } = await collect(model);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Hello there, friend.");
    expect(usage).toEqual({ promptTokens: 1, completionTokens: 5 });
    expect(stub!.requests[0].body).toMatchObject({ model: "gpt-test", stream: true, stream_options: { include_usage: true } });
  });

  it("runs against a stub that also answers without streaming, as the real API does", async () => {
    stub = await startOpenAiStub({ reply: (messages) => `echo: ${messages.at(-1)!.content}` });
    const response = await fetch(`${stub.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "ping" }] }),
    });
    const body = await response.json();
    expect(body.choices[0].message).toMatchObject({ role: "assistant", content: "echo: ping" });
    expect(body.usage.completion_tokens).toBe(Math.ceil("echo: ping".length / 4));
  });

  it("maps a bad key to FailedPreconditionError with the provider's message", async () => {
    const model = await modelAgainstStub({ fail: () => ({ status: 401, message: "Incorrect API key provided: sk-test" }) });
    const error = await collect(model).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FailedPreconditionError);
    expect((error as Error).message).toContain("Incorrect API key provided");
  });

  it("maps a 400 to InvalidInputError with the provider's message", async () => {
    const model = await modelAgainstStub({ fail: () => ({ status: 400, message: "This model's maximum context length is 8192 tokens" }) });
    const error = await collect(model).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain("maximum context length");
  });

  it("maps a 5xx to UnavailableError", async () => {
    const model = await modelAgainstStub({ fail: () => ({ status: 502, message: "bad gateway" }) });
    await expect(collect(model)).rejects.toBeInstanceOf(UnavailableError);
  });

  it("maps an unreachable endpoint to UnavailableError", async () => {
    stub = await startOpenAiStub();
    const url = stub.url;
    await stub.close();
    stub = undefined;
    const model = new OpenAiChatModel({ baseURL: url, apiKey: "k", model: "m", maxRetries: 0 });
    await expect(collect(model)).rejects.toBeInstanceOf(UnavailableError);
  });
});
