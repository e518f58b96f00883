import { afterEach, describe, expect, it } from "vitest";
import type { SearchHit, SearchQuery } from "../../../lib/domain.ts";
import { UnavailableError } from "../../../lib/errors.ts";
import { startOpenAiStub, type OpenAiStub, type StubChatMessage } from "../../../lib/testing/openai-stub.ts";
import { HashingEmbedder } from "../../../lib/testing/hashing-embedder.ts";
import { answer, type AnswerDeps, type AnswerEvent, type AnswerSettings } from "./answer-pipeline.ts";
import { OpenAiChatModel } from "../chat-models/openai-chat-model.ts";
import { makeHit } from "../testing/test-hits.ts";

const hits = [
  makeHit("pw", "To reset your password, open Settings and choose Security.", { fileName: "guide.pdf", page: 4, sectionPath: ["Account"], score: 0.9 }),
  makeHit("2fa", "Two-factor codes expire after 30 seconds.", { fileName: "faq.md", score: 0.7 }),
  makeHit("pw-copy", "To reset your password, open Settings and choose Security.", { fileName: "guide-v2.pdf", score: 0.6 }),
];
const settings: AnswerSettings = {
  retrieval: { knowledgeBaseIds: ["kb-1"], mode: "hybrid", topK: 5, minScore: 0, documentIds: [] },
  contextTokenBudget: 1000,
};
const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

let stub: OpenAiStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

function deps(overrides: Partial<AnswerDeps> = {}): AnswerDeps & { queries: SearchQuery[] } {
  const queries: SearchQuery[] = [];
  const embedder = new HashingEmbedder();
  return {
    queries,
    embed: async (q) => ({ vector: (await embedder.embed([q], "query"))[0], knownTokenShare: embedder.knownTokenShare(q) }),
    search: async (q) => {
      queries.push(q);
      return hits;
    },
    countTokens: countWords,
    ...overrides,
  };
}

async function collect(events: AsyncIterable<AnswerEvent>) {
  const all: AnswerEvent[] = [];
  for await (const e of events) all.push(e);
  const text = all.map((e) => (e.type === "text" ? e.delta : "")).join("");
  const citations = all.flatMap((e) => (e.type === "citation" ? [e.citation] : []));
  const final = all.at(-1);
  if (final?.type !== "final") throw new Error("the last event is not final");
  return { all, text, citations, final };
}

/** Answers the way a grounded model would, citing [1] and [2] — plus [7], which the context lacks. */
function scriptedReply(messages: StubChatMessage[]): string {
  const user = messages.find((m) => m.role === "user")!.content;
  if (!user.includes("[1] (guide.pdf, p. 4, Account)") || !user.includes("[2] (faq.md)")) return "I don't know.";
  return "Open Settings and choose Security [1]. Codes expire after 30 seconds [2][7].";
}

describe("answer with a chat model", () => {
  it("streams text and citations and ends with usage and the turn record", async () => {
    stub = await startOpenAiStub({ reply: scriptedReply });
    const chatModel = new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "gpt-test", maxRetries: 0 });
    const d = deps({ chatModel });
    const { all, text, citations, final } = await collect(answer("  How do I reset my password?  ", d, settings));

    expect(all.slice(0, 2)).toEqual([{ type: "status", stage: "retrieving" }, { type: "status", stage: "generating" }]);
    expect(text).toBe("Open Settings and choose Security [1]. Codes expire after 30 seconds [2].");
    expect(citations.map((c) => [c.marker, c.chunkId, c.fileName, c.page])).toEqual([[1, "pw", "guide.pdf", 4], [2, "2fa", "faq.md", 0]]);

    // Each citation arrives before the text that carries its marker is complete.
    let soFar = "";
    for (const e of all) {
      if (e.type === "text") soFar += e.delta;
      if (e.type === "citation") expect(soFar).not.toContain(`[${e.citation.marker}]`);
    }

    const request = stub.requests[0].body;
    expect(request.stream).toBe(true);
    const promptChars = request.messages.reduce((n: number, m: StubChatMessage) => n + m.content.length, 0);
    expect(final.usage).toEqual({ promptTokens: Math.ceil(promptChars / 4), completionTokens: Math.ceil(scriptedReply(request.messages).length / 4) });
    expect(final.extractive).toBe(false);
    expect(final.droppedMarkers).toBe(1);
    expect(final.retrievalSummary).toEqual({ hitsConsidered: 3, usedInContext: 2, topScore: 0.9, mode: "hybrid" });

    const record = final.record;
    expect(record.question).toBe("How do I reset my password?");
    expect(record.model).toBe("gpt-test");
    expect(record.stages.map((s) => s.stage)).toEqual(["retrieve", "build-context", "evidence", "generate", "verify"]);
    expect(record.markers).toEqual({ used: [1, 2], dropped: [7], resolved: 2, unsupported: 0 });
    expect(record.hits.map((h) => [h.rank, h.chunkId, h.contextNumber, h.excludedReason])).toEqual([
      [1, "pw", 1, undefined],
      [2, "2fa", 2, undefined],
      [3, "pw-copy", 0, "duplicate"],
    ]);
    expect(record.context.map((c) => c.chunkId)).toEqual(["pw", "2fa"]);
    expect(d.queries[0].vector).toHaveLength(384);
  });

  it("checks each citation against its chunk and marks the unsupported one in the final event and the record", async () => {
    stub = await startOpenAiStub({ reply: () => "Open Settings and choose Security [1]. Passwords never expire [2]." });
    const chatModel = new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "gpt-test", maxRetries: 0 });
    const embedded: string[][] = [];
    const embedder = new HashingEmbedder();
    const embedForSupport = async (texts: string[]) => {
      embedded.push(texts);
      return (await embedder.embed(texts, "document")).map((vector, i) => ({ vector, knownTokenShare: embedder.knownTokenShare(texts[i]) }));
    };
    const { text, final } = await collect(answer("How do I reset my password?", deps({ chatModel, embedForSupport }), settings));
    const checks = final.citationChecks.map((c) => ({ marker: c.marker, sentence: text.slice(c.sentenceStart, c.sentenceEnd), supported: c.supported }));
    expect(checks).toEqual([
      { marker: 1, sentence: "Open Settings and choose Security", supported: true },
      { marker: 2, sentence: "Passwords never expire", supported: false },
    ]);
    // Only the sentence words did not support went to the embedder, with the cited chunk's sentences.
    expect(embedded).toEqual([["Passwords never expire", "Two-factor codes expire after 30 seconds."]]);
    expect(final.citationChecks[1].embeddingSupport).toBeLessThan(0.6);
    expect(final.record.markers).toMatchObject({ used: [1, 2], resolved: 2, unsupported: 1 });
    expect(final.record.citationChecks).toEqual(final.citationChecks);
    expect(final.record.stages.map((s) => s.stage)).toEqual(["retrieve", "build-context", "evidence", "generate", "verify"]);
  });

  it("checks a marker the model writes at a sentence's start against the rest of the sentence, as models writing Chinese do", async () => {
    stub = await startOpenAiStub({ reply: () => "根据【1】，重置密码需打开设置并选择安全选项。According to [2], two-factor codes expire after 30 seconds." });
    const chatModel = new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "gpt-test", maxRetries: 0 });
    const pwHits = [
      makeHit("pw", "如需重置密码，请打开设置并选择安全选项。", { fileName: "guide.md", score: 0.9 }),
      makeHit("2fa", "Two-factor codes expire after 30 seconds.", { fileName: "faq.md", score: 0.7 }),
    ];
    const { text, final } = await collect(answer("如何重置密码？", deps({ chatModel, search: async () => pwHits }), settings));
    expect(text).toBe("根据[1]，重置密码需打开设置并选择安全选项。According to [2], two-factor codes expire after 30 seconds.");
    expect(final.citationChecks.map((c) => [c.marker, text.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      [1, "重置密码需打开设置并选择安全选项。", true],
      [2, "two-factor codes expire after 30 seconds.", true],
    ]);
    expect(final.record.markers).toMatchObject({ resolved: 2, unsupported: 0 });
  });

  it("tells the model to answer in the question's language", async () => {
    stub = await startOpenAiStub({ reply: () => "在设置中选择安全选项【1】。" });
    const chatModel = new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "gpt-test", maxRetries: 0 });
    // A Chinese question over a passage that names its subject (the evidence must hold it).
    const zh = [{ ...hits[0], chunk: { ...hits[0].chunk, text: "重置密码：打开设置，选择安全选项。" } }];
    const { text, citations } = await collect(answer("如何重置密码？", deps({ chatModel, search: async () => zh }), settings));
    expect(text).toBe("在设置中选择安全选项[1]。");
    expect(citations.map((c) => c.chunkId)).toEqual(["pw"]);
    const system = stub.requests[0].body.messages[0].content as string;
    expect(system).toMatch(/same language as the question/);
    expect(stub.requests[0].body.messages[1].content).toContain("Question: 如何重置密码？");
  });

  it("does not ask the model when nothing was retrieved", async () => {
    stub = await startOpenAiStub({ reply: () => "From my own memory: ..." });
    const chatModel = new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "gpt-test", maxRetries: 0 });
    const { text, citations, final } = await collect(answer("Parking?", deps({ chatModel, search: async () => [] }), settings));
    expect(stub.requests).toHaveLength(0);
    expect(text).toBe("The selected knowledge bases do not answer this question.");
    expect(citations).toEqual([]);
    expect(final.retrievalSummary.hitsConsidered).toBe(0);
    expect(final.evidence).toMatchObject({ answered: false, reason: "nothing was retrieved" });
  });

  it("fails when search fails, before any model call", async () => {
    stub = await startOpenAiStub({ reply: () => "ungrounded" });
    const chatModel = new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "gpt-test", maxRetries: 0 });
    const failing = deps({ chatModel, search: async (): Promise<SearchHit[]> => Promise.reject(new UnavailableError("index down")) });
    await expect(collect(answer("How?", failing, settings))).rejects.toBeInstanceOf(UnavailableError);
    expect(stub.requests).toHaveLength(0);
  });

  it("fails when the model endpoint is down", async () => {
    stub = await startOpenAiStub({ fail: () => ({ status: 503, message: "overloaded" }) });
    const chatModel = new OpenAiChatModel({ baseURL: stub.url, apiKey: "k", model: "gpt-test", maxRetries: 0 });
    await expect(collect(answer("How do I reset my password?", deps({ chatModel }), settings))).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe("answer without a chat model", () => {
  it("answers extractively with citations", async () => {
    const { text, citations, final } = await collect(answer("How do I reset my password?", deps(), settings));
    expect(text).toMatch(/^Extractive answer \(no language model configured\)/);
    expect(text).toContain("To reset your password, open Settings and choose Security. [1]");
    expect(citations.map((c) => c.chunkId)).toEqual(["pw"]);
    expect(final.extractive).toBe(true);
    expect(final.usage).toBeNull();
    expect(final.record.model).toBe("extractive");
    expect(final.record.stages.map((s) => s.stage)).toEqual(["retrieve", "build-context", "evidence", "extract", "verify"]);
    // A quote is supported by the chunk it comes from.
    expect(final.record.markers).toMatchObject({ resolved: 1, unsupported: 0 });
  });

  it("numbers an extract's sources in the order shown, and records their context numbers", async () => {
    const { text, citations, final } = await collect(answer("When do two-factor codes expire?", deps(), settings));
    expect(text).toContain("Two-factor codes expire after 30 seconds. [1]");
    expect(citations.map((c) => [c.marker, c.chunkId])).toEqual([[1, "2fa"]]);
    expect(final.record.markers.used).toEqual([2]);
    expect(final.record.context.find((c) => c.number === 2)?.chunkId).toBe("2fa");
  });
});

describe("retrieval options in the turn", () => {
  it("records the rerank stage, why it was skipped, and the degradation, in the turn and the final event", async () => {
    const failing = { name: "tei reranker http://x/rerank", rerank: async () => Promise.reject(new Error("HTTP 500")) };
    const d = deps({
      embed: async () => Promise.reject(new UnavailableError("embedder down")),
      reranker: failing,
    });
    const { final } = await collect(answer("reset password", d, { ...settings, options: { rerank: true } }));
    if (final.type !== "final") throw new Error("unreachable");
    const stages = final.record.stages.map((s) => [s.stage, s.note]);
    expect(stages[0]).toEqual(["retrieve", expect.stringMatching(/^3 hits \(15 candidates for rerank\); degraded: vector search unavailable \(embedder down\)/)]);
    expect(stages[1]).toEqual(["rerank", "skipped, fused order kept: tei reranker http://x/rerank failed: HTTP 500"]);
    expect(final.notes).toMatchObject({ degraded: expect.stringMatching(/^vector search unavailable/), rerankSkipped: "tei reranker http://x/rerank failed: HTTP 500" });
    expect(final.record.retrievalNotes).toBe(final.notes);
    expect(final.record.retrievalOptions).toEqual({ rerank: true });
    // The embedder failed before any hybrid search was sent: only the keyword search ran.
    expect(d.queries.map((q) => q.mode)).toEqual(["bm25"]);
  });
});
