import { afterEach, describe, expect, it } from "vitest";
import { startOpenAiStub, type OpenAiStub } from "../../../../lib/testing/openai-stub.ts";
import { OpenAiChatModel } from "../../chat-models/openai-chat-model.ts";
import { makeHit } from "../../testing/test-hits.ts";
import { LlmReranker } from "./llm-reranker.ts";
import { rerankHits } from "./reranker.ts";

describe("LlmReranker through an OpenAI-compatible endpoint", () => {
  let stub: OpenAiStub | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });
  const passageOf = (messages: { content: string }[]) => /Passage: (.*)\n\nScore/s.exec(messages.at(-1)!.content)?.[1] ?? "";

  it("asks for one score per candidate and orders by them", async () => {
    stub = await startOpenAiStub({ reply: (messages) => (passageOf(messages).includes("tunnel") ? "9" : "Score: 2") });
    const reranker = new LlmReranker(new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "judge", maxRetries: 0 }));
    const outcome = await rerankHits("how long is the tunnel", [makeHit("a", "a bridge"), makeHit("b", "the tunnel is 57 km"), makeHit("c", "a road")], reranker, 2);
    expect(outcome.skipped).toBeUndefined();
    expect(outcome.hits.map((h) => [h.chunk.id, h.explain.rerankScore])).toEqual([
      ["b", 9],
      ["a", 2],
    ]);
    expect(stub.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(3);
    expect(stub.requests[0].body.messages[1].content).toContain("Query: how long is the tunnel");
  });

  it("keeps the fused order when a reply holds no number", async () => {
    stub = await startOpenAiStub({ reply: () => "I cannot judge that." });
    const reranker = new LlmReranker(new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "judge", maxRetries: 0 }));
    const outcome = await rerankHits("q", [makeHit("a", "x"), makeHit("b", "y")], reranker, 2);
    expect(outcome.hits.map((h) => h.chunk.id)).toEqual(["a", "b"]);
    expect(outcome.skipped).toMatch(/^llm reranker \(judge\) failed: the model's reply for candidate \d holds no score$/);
  });
});
