import { describe, expect, it } from "vitest";
import { completionRequest, completionTargets, modelTargets } from "./chat-completion-shapes.ts";

const ask = (messages: unknown[], extra: Record<string, unknown> = {}) => completionRequest({ model: "helper", messages, ...extra });

describe("an OpenAI chat completion request as Quarry's Chat", () => {
  it("names an assistant, or knowledge bases after kb:", () => {
    expect(modelTargets("helper")).toEqual({ assistant: "helper", knowledgeBases: [] });
    expect(modelTargets("kb:handbook, policies")).toEqual({ assistant: "", knowledgeBases: ["handbook", "policies"] });
    expect(() => modelTargets("kb:")).toThrow(/names no knowledge base/);
    expect(completionTargets({ model: "kb:a,b" })).toEqual({ knowledgeBases: ["a", "b"] });
    expect(completionTargets({ model: "helper" })).toEqual({ assistants: ["helper"] });
    expect(() => completionTargets({ messages: [] })).toThrow(/`model` is required/);
  });

  it("takes the last user message as the question and the pairs before it as history, leaving system messages out", () => {
    const { chat, stream } = ask([
      { role: "system", content: "Be terse." },
      { role: "user", content: "When?" },
      { role: "assistant", content: "In 1858 [1]." },
      { role: "user", content: [{ type: "text", text: "And " }, { type: "text", text: "where?" }] },
    ]);
    expect(stream).toBe(false);
    expect(chat.question).toBe("And where?");
    expect(chat.assistant).toBe("helper");
    expect(chat.history.map((r) => [r.question, r.answer])).toEqual([["When?", "In 1858 [1]."]]);
  });

  it("reads streaming, usage and retrieval settings from the request", () => {
    const r = ask([{ role: "user", content: "q" }], { stream: true, stream_options: { include_usage: true }, quarry: { settings: { topK: 4, mode: "RETRIEVAL_MODE_VECTOR" } } });
    expect([r.stream, r.includeUsage, r.chat.settings?.topK]).toEqual([true, true, 4]);
    expect(() => ask([{ role: "user", content: "q" }], { quarry: { settings: { topK: "many" } } })).toThrow(/quarry.settings/);
  });

  it("refuses what it cannot answer, saying why", () => {
    expect(() => ask([])).toThrow(/non-empty array/);
    expect(() => ask([{ role: "user", content: "q" }, { role: "assistant", content: "a" }])).toThrow(/last message must be the user's question/);
    expect(() => ask([{ role: "tool", content: "x" }])).toThrow(/messages\[0\].role is "tool"/);
    expect(() => ask([{ role: "user", content: [{ type: "image_url", image_url: {} }] }])).toThrow(/text only/);
  });
});
