// The OpenAI-compatible surface driven by the `openai` npm client itself: a chat completion whole
// and streamed, from an assistant and from `kb:` bases, with a conversation's earlier messages; the
// citations read from the `quarry` extension; each answer equal to the Connect Chat's for the same
// question, bases and history (same text, same citations); the model list a scoped key sees;
// embeddings in both encodings; and OpenAI's errors as the client raises them.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayClient, type QuarryClient } from "../../client/gateway-client.ts";
import type { QuarryExtension, WireCitation } from "../../gateway/http/openai/chat-completion-shapes.ts";
import type { Citation } from "../../gen/quarry/common/v1/common_pb.ts";
import { collectChat } from "./e2e-helpers.ts";
import { startHttpWorld, type HttpWorld } from "../support/http-world.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";

let world: HttpWorld;
let openai: OpenAI;
let connect: QuarryClient;

beforeAll(async () => {
  world = await startHttpWorld();
  openai = new OpenAI({ baseURL: `${world.url}/v1`, apiKey: world.keys.reader, maxRetries: 0 });
  connect = gatewayClient(world.url, world.keys.reader);
}, 180_000);
afterAll(async () => world?.stop());

const QUESTION = "When are expense reports due?";

/** A Connect citation as the extension spells it (supported is checked separately). */
const wire = (c: Citation) => ({ marker: c.marker, chunk_id: c.chunkId, document_id: c.documentId, file_name: c.fileName, page: c.page, section_path: [...c.sectionPath], snippet: c.snippet, score: c.score });
const sameFields = (c: WireCitation) => ({ marker: c.marker, chunk_id: c.chunk_id, document_id: c.document_id, file_name: c.file_name, page: c.page, section_path: c.section_path, snippet: c.snippet, score: c.score });

describe("the OpenAI-compatible API through the openai npm client", () => {
  it("answers as the assistant, with the Connect Chat's text and citations, the citations in the message's extension", async () => {
    const expected = await collectChat(connect, { question: QUESTION, assistant: world.a.assistant });
    const completion = await openai.chat.completions.create({ model: world.a.assistant, messages: [{ role: "user", content: QUESTION }] });
    const message = completion.choices[0].message;
    expect(message.content).toBe(expected.text);
    expect(message.content).toMatch(/\[1\]/);
    const extension = (message as unknown as { quarry: QuarryExtension }).quarry;
    expect(extension.citations.map(sameFields)).toEqual(expected.citations.map(wire));
    expect(extension.citations[0].document_id).toBe(world.a.docId);
    expect(extension.citations[0].file_name).toBe("tenant-a-handbook.txt");
    for (const c of extension.citations) expect(typeof c.supported === "boolean" || c.supported === null).toBe(true);
    expect(extension.turn_id).toMatch(/^tn_/);
    expect(completion.id).toBe(`chatcmpl-${extension.turn_id}`);
    expect(completion.choices[0].finish_reason).toBe("stop");
    expect(completion.model).toBe(world.a.assistant);
    // The turn is stored like any other, with its provenance.
    expect((await connect.getTurn({ turnId: extension.turn_id })).turn?.answer).toBe(expected.text);
  });

  it("streams the same answer as OpenAI streams, the citations on the last chunk, usage when asked", async () => {
    const expected = await collectChat(connect, { question: QUESTION, knowledgeBases: [world.a.name] });
    const stream = await openai.chat.completions.create({ model: `kb:${world.a.name}`, messages: [{ role: "user", content: QUESTION }], stream: true, stream_options: { include_usage: true } });
    let text = "";
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(text).toBe(expected.text);
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    const last = chunks.filter((c) => c.choices.length > 0).at(-1)!;
    expect(last.choices[0].finish_reason).toBe("stop");
    const extension = (last as unknown as { quarry: QuarryExtension }).quarry;
    expect(extension.citations.map(sameFields)).toEqual(expected.citations.map(wire));
    expect(chunks.at(-1)!.usage).toMatchObject({ total_tokens: expect.any(Number) });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it("reads earlier messages as the conversation, as the Connect Chat reads the same history", async () => {
    const history = [{ question: "When does the office open?", answer: "At nine in the morning [1]." }];
    const expected = await collectChat(connect, { question: QUESTION, knowledgeBases: [world.a.name], history });
    const completion = await openai.chat.completions.create({
      model: `kb:${world.a.name}`,
      messages: [
        { role: "system", content: "You are helpful." },
        { role: "user", content: history[0].question },
        { role: "assistant", content: history[0].answer },
        { role: "user", content: QUESTION },
      ],
    });
    expect(completion.choices[0].message.content).toBe(expected.text);
    const turnId = (completion.choices[0].message as unknown as { quarry: QuarryExtension }).quarry.turn_id;
    // The follow-up was read as one: with no chat model configured, it is searched as asked, and the turn says so.
    expect((await connect.getTurn({ turnId })).turn?.provenance?.historyTurns).toBe(1);
  });

  it("lists the assistants and bases a key may use, and only those for a scoped key", async () => {
    const all = (await openai.models.list()).data.map((m) => m.id);
    expect(all).toEqual(expect.arrayContaining([world.a.assistant, world.b.assistant, `kb:${world.a.name}`, `kb:${world.b.name}`]));
    const scoped = new OpenAI({ baseURL: `${world.url}/v1`, apiKey: world.keys["tenant-a-reader"], maxRetries: 0 });
    const mine = (await scoped.models.list()).data.map((m) => m.id);
    expect(mine).toEqual(expect.arrayContaining([world.a.assistant, `kb:${world.a.name}`]));
    expect(mine).not.toContain(world.b.assistant);
    expect(mine).not.toContain(`kb:${world.b.name}`);
  });

  it("embeds with the local model, base64 (the client's default) and float alike", async () => {
    const packed = await openai.embeddings.create({ model: "", input: ["expense reports", "office hours"] });
    const plain = await openai.embeddings.create({ model: "", input: ["expense reports", "office hours"], encoding_format: "float" });
    expect(packed.data).toHaveLength(2);
    expect(packed.data[0].embedding).toHaveLength(384);
    for (const [i, d] of plain.data.entries()) expect(packed.data[i].embedding.map((x) => Number(x.toFixed(5)))).toEqual(d.embedding.map((x) => Number(x.toFixed(5))));
    expect(packed.model).toBe("all-MiniLM-L6-v2-int8");
    // The local embedder reports no token count; the field is there for clients that read it.
    expect(packed.usage).toEqual({ prompt_tokens: expect.any(Number), total_tokens: expect.any(Number) });
  });

  it("fails as OpenAI fails: an unknown model, a bad request, a wrong key, a base out of scope", async () => {
    const unknown = await openai.chat.completions.create({ model: "no-such-assistant", messages: [{ role: "user", content: QUESTION }] }).catch((e) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.code).toBe("model_not_found");
    expect(unknown.message).toMatch(/no-such-assistant/);
    const empty = await openai.chat.completions.create({ model: world.a.assistant, messages: [] }).catch((e) => e);
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
    expect(empty.message).toMatch(/messages/);
    const badModel = await openai.embeddings.create({ model: "no-such-model", input: "x" }).catch((e) => e);
    expect(badModel).toBeInstanceOf(OpenAI.NotFoundError);
    const wrongKey = await new OpenAI({ baseURL: `${world.url}/v1`, apiKey: "qk_nope", maxRetries: 0 }).models.list().catch((e) => e);
    expect(wrongKey).toBeInstanceOf(OpenAI.AuthenticationError);
    const scoped = new OpenAI({ baseURL: `${world.url}/v1`, apiKey: world.keys["tenant-a-reader"], maxRetries: 0 });
    const outOfScope = await scoped.chat.completions.create({ model: `kb:${world.b.name}`, messages: [{ role: "user", content: QUESTION }], stream: true }).catch((e) => e);
    // Out of scope reads as missing (gateway/access/scope.ts), so another tenant's base is never confirmed.
    expect(outOfScope).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe("the OpenAI-compatible API over a chat model (a local OpenAI-compatible stub)", () => {
  let stub: OpenAiStub;
  let withModel: HttpWorld;
  beforeAll(async () => {
    stub = await startOpenAiStub({ reply: () => "Expense reports are due on the fifth of each month [1].", deltaDelayMs: 20 });
    withModel = await startHttpWorld({ OPENAI_BASE_URL: stub.url, QUARRY_CHAT_MODEL: "stub-chat", OPENAI_API_KEY: "test-key" });
  }, 180_000);
  afterAll(async () => {
    await withModel?.stop();
    await stub?.close();
  });

  it("returns the model's answer with its markers, checked citations and the model's name, as the Connect Chat does", async () => {
    const client = new OpenAI({ baseURL: `${withModel.url}/v1`, apiKey: withModel.keys.reader, maxRetries: 0 });
    const history = [{ question: "When does the office open?", answer: "At nine [1]." }];
    const expected = await collectChat(gatewayClient(withModel.url, withModel.keys.reader), { question: QUESTION, assistant: withModel.a.assistant, history });
    const stream = await client.chat.completions.create({
      model: withModel.a.assistant,
      messages: [
        { role: "user", content: history[0].question },
        { role: "assistant", content: history[0].answer },
        { role: "user", content: QUESTION },
      ],
      stream: true,
    });
    let text = "";
    let extension: QuarryExtension | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      extension ??= (chunk as unknown as { quarry?: QuarryExtension }).quarry;
    }
    expect(text).toBe("Expense reports are due on the fifth of each month [1].");
    expect(text).toBe(expected.text);
    expect(extension!.citations.map(sameFields)).toEqual(expected.citations.map(wire));
    expect(extension!.citations[0].supported).toBe(true);
    expect(extension).toMatchObject({ answer_model: "stub-chat", extractive: false, unsupported_markers: 0 });
    // The model was given the conversation: the earlier round sits between the system prompt and the question.
    const answerRequest = stub.requests.filter((r) => r.path === "/v1/chat/completions").at(-1)!.body.messages as { role: string; content: string }[];
    expect(answerRequest.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(answerRequest[1].content).toBe("When does the office open?");
  });

  it("lets a client walk away mid-stream, and keeps serving", async () => {
    const reading = new AbortController();
    const res = await fetch(`${withModel.url}/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${withModel.keys.reader}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: withModel.a.assistant, messages: [{ role: "user", content: QUESTION }], stream: true }),
      signal: reading.signal,
    });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^data: /);
    reading.abort();
    const client = new OpenAI({ baseURL: `${withModel.url}/v1`, apiKey: withModel.keys.reader, maxRetries: 0 });
    const after = await client.chat.completions.create({ model: withModel.a.assistant, messages: [{ role: "user", content: QUESTION }] });
    expect(after.choices[0].message.content).toBe("Expense reports are due on the fifth of each month [1].");
  });
});
