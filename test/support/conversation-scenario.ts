// Conversations and assistants end to end, against any running Quarry (embedded or distributed)
// whose chat model is the OpenAI-compatible stub: a two-base assistant with priorities, a
// follow-up rewritten through the stub, GetTurn's provenance, the conversation RPCs, and bad input
// answered with the right Connect codes. The suites that run it start Quarry with
// conversationStubEnv(stub) and hand over a client.
import { randomBytes } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { QueryRewrite, type ChatResponse } from "../../gen/quarry/answer/v1/answer_pb.ts";
import { RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import { REWRITE_INSTRUCTION } from "../../services/answer/index.ts";
import { failure, upload, watchAll } from "../e2e/e2e-helpers.ts";
import { isRewriteRequest, startOpenAiStub, type OpenAiStub, type StubChatMessage } from "../../lib/testing/openai-stub.ts";

export const MANUAL = `# Skerry Point lighthouse

The Fresnel lens of the Skerry Point lighthouse was ground in Paris by Henry-Lepaute in 1858 and first lit that autumn.
`;
// Says "Skerry Point lighthouse lens" more often than the manual: on scores alone it would rank first.
const FORUM = `# Forum thread

Skerry Point lighthouse lens: a member says the Skerry Point lighthouse lens was made in Birmingham. Skerry Point lighthouse lens, Birmingham, 1901.
`;

export const FIRST_QUESTION = "Where was the Skerry Point lighthouse lens made?";
export const FOLLOW_UP = "And in which year was it first lit?";
export const STANDALONE = "In which year was the Skerry Point lighthouse lens first lit?";
export const STUB_MODEL = "stub-chat";

/** The stub: rewrites the follow-up as STANDALONE, answers every question citing [1]. */
export function startConversationStub(): Promise<OpenAiStub> {
  return startOpenAiStub({
    reply: () => "It was ground in Paris [1].",
    rewrite: { marker: REWRITE_INSTRUCTION, reply: (lastUser) => (lastUser.includes(FOLLOW_UP) ? `Question: "${STANDALONE}"` : "") },
  });
}

export const conversationStubEnv = (stub: OpenAiStub) => ({ OPENAI_BASE_URL: stub.url, QUARRY_CHAT_MODEL: STUB_MODEL, OPENAI_API_KEY: "test-key" });

interface Collected {
  events: ChatResponse["event"][];
  text: string;
}

async function chat(client: QuarryClient, request: Parameters<QuarryClient["chat"]>[0]): Promise<Collected> {
  const events: ChatResponse["event"][] = [];
  let text = "";
  for await (const { event } of client.chat(request)) {
    if (!event) continue;
    events.push(event.event);
    if (event.event.case === "text") text += event.event.value.text;
  }
  return { events, text };
}

const started = (c: Collected) => {
  expect(c.events[0]?.case, "the first event names the conversation and the turn").toBe("started");
  return c.events[0]!.case === "started" ? c.events[0]!.value : (undefined as never);
};
const finalOf = (c: Collected) => {
  const last = c.events.at(-1)!;
  expect(last.case).toBe("final");
  return last.case === "final" ? last.value : (undefined as never);
};

const chatRequests = (stub: OpenAiStub) => stub.requests.filter((r) => r.path === "/v1/chat/completions");
const userOf = (messages: StubChatMessage[]) => messages.filter((m) => m.role === "user").at(-1)!.content;

/** Registers the scenario's tests; `env` gives the running Quarry's client and its stub. */
export function conversationScenario(env: () => { client: QuarryClient; stub: OpenAiStub }): void {
  const suffix = randomBytes(3).toString("hex");
  const manuals = `manuals-${suffix}`;
  const forum = `forum-${suffix}`;
  const assistantName = `keeper-${suffix}`;
  let conversationId = "";
  let secondTurnId = "";

  it("mounts two knowledge bases on an assistant, each with its top-k and priority", async () => {
    const { client } = env();
    const docs: string[] = [];
    for (const [kb, file, text] of [
      [manuals, "skerry-manual.md", MANUAL],
      [forum, "forum-thread.md", FORUM],
    ]) {
      await client.createKnowledgeBase({ name: kb });
      docs.push((await upload(client, kb, file, new TextEncoder().encode(text))).document!.id);
    }
    await watchAll(client, docs);
    const { assistant } = await client.createAssistant({
      assistant: {
        name: assistantName,
        systemPrompt: "You are the lighthouse keeper's assistant.",
        // Mounted first but trusted less.
        knowledgeBases: [
          { knowledgeBase: forum, topK: 2, priority: 1 },
          { knowledgeBase: manuals, topK: 2, priority: 10 },
        ],
        retrieval: { mode: RetrievalMode.HYBRID, topK: 4 },
        hideFileNames: true,
      },
    });
    expect(assistant!.id).toMatch(/^as_/);
    expect(assistant!.knowledgeBases.map((m) => m.knowledgeBase)).toEqual([
      (await client.getKnowledgeBase({ knowledgeBase: forum })).knowledgeBase!.id,
      (await client.getKnowledgeBase({ knowledgeBase: manuals })).knowledgeBase!.id,
    ]);
    expect((await client.getAssistant({ assistant: assistantName })).assistant).toEqual(assistant);
    expect((await client.listAssistants({})).assistants.map((a) => a.name)).toContain(assistantName);
  });

  it("answers through the assistant: the higher-priority base ranks first, the context is grouped by base, file names hidden", async () => {
    const { client, stub } = env();
    const before = chatRequests(stub).length;
    const result = await chat(client, { question: FIRST_QUESTION, assistant: assistantName });
    const ids = started(result);
    expect(ids.conversationId).toMatch(/^cv_/);
    expect(ids.turnId).toMatch(/^tn_/);
    conversationId = ids.conversationId;
    const final = finalOf(result);
    expect(final.rewrite).toBe(QueryRewrite.FIRST_TURN);
    expect(final.retrievalQuery).toBe(FIRST_QUESTION);
    const citation = result.events.find((e) => e?.case === "citation");
    expect(citation?.case === "citation" && citation.value.fileName).toBe("skerry-manual.md");

    const requests = chatRequests(stub).slice(before);
    expect(requests, "the first turn is not rewritten").toHaveLength(1);
    const messages: StubChatMessage[] = requests[0].body.messages;
    expect(messages[0].content.startsWith("You are the lighthouse keeper's assistant.")).toBe(true);
    const prompt = userOf(messages);
    const manualsAt = prompt.indexOf(`Knowledge base: ${manuals}`);
    const forumAt = prompt.indexOf(`Knowledge base: ${forum}`);
    expect(manualsAt, prompt).toBeGreaterThanOrEqual(0);
    expect(forumAt, prompt).toBeGreaterThan(manualsAt);
    expect(prompt.indexOf("[1]")).toBeGreaterThan(manualsAt);
    expect(prompt.indexOf("[1]")).toBeLessThan(forumAt);
    expect(prompt.slice(prompt.indexOf("[1]"), forumAt)).toContain("Henry-Lepaute");
    expect(prompt).not.toContain("skerry-manual.md");
    expect(prompt).not.toContain("forum-thread.md");

    const turn = (await client.getTurn({ turnId: ids.turnId })).turn!;
    const p = turn.provenance!;
    const forumId = (await client.getKnowledgeBase({ knowledgeBase: forum })).knowledgeBase!.id;
    const manualsId = (await client.getKnowledgeBase({ knowledgeBase: manuals })).knowledgeBase!.id;
    expect(p.lists.map((l) => [l.knowledgeBaseId, l.priority, l.topK])).toEqual([
      [forumId, 1, 2],
      [manualsId, 10, 2],
    ]);
    // The forum is mounted first and its chunk scores no lower: by scores and mount order it would lead.
    expect(p.lists[0].hits[0].score).toBeGreaterThanOrEqual(p.lists[1].hits[0].score);
    expect(p.fused[0].knowledgeBaseId).toBe(manualsId);
    expect(p.fused.map((f) => f.knowledgeBaseId)).toContain(forumId);
    // Grouped: every manual chunk, then every forum chunk.
    const bases = p.context.map((c) => c.knowledgeBaseId);
    expect(bases[0]).toBe(manualsId);
    expect(bases).toContain(forumId);
    expect(bases.slice(bases.indexOf(forumId)).every((id) => id === forumId)).toBe(true);
    expect(p.fusionRule).toContain("priority");
    expect(p.hideFileNames).toBe(true);
  });

  it("rewrites a follow-up through the chat model for retrieval, sends the history, and records the turn's provenance", async () => {
    const { client, stub } = env();
    const before = chatRequests(stub).length;
    const result = await chat(client, { question: FOLLOW_UP, conversationId });
    const ids = started(result);
    expect(ids.conversationId).toBe(conversationId);
    secondTurnId = ids.turnId;
    const final = finalOf(result);
    expect(final.rewrite).toBe(QueryRewrite.REWRITTEN);
    expect(final.retrievalQuery).toBe(STANDALONE);

    const [rewriteRequest, answerRequest] = chatRequests(stub).slice(before);
    expect(isRewriteRequest(rewriteRequest, REWRITE_INSTRUCTION)).toBe(true);
    expect(userOf(rewriteRequest.body.messages)).toContain(FIRST_QUESTION);
    expect(userOf(rewriteRequest.body.messages)).toContain(FOLLOW_UP);
    const messages: StubChatMessage[] = answerRequest.body.messages;
    // The history: the first round, its markers removed, then this turn's context and question.
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(messages[1].content).toBe(FIRST_QUESTION);
    expect(messages[2].content).toBe("It was ground in Paris.");
    expect(messages[3].content).toContain(`Question: ${FOLLOW_UP}`);

    const turn = (await client.getTurn({ turnId: secondTurnId })).turn!;
    expect(turn.number).toBe(2);
    expect(turn.question).toBe(FOLLOW_UP);
    expect(turn.answer).toBe(result.text);
    expect(turn.citations.map((c) => c.fileName)).toEqual(["skerry-manual.md"]);
    const p = turn.provenance!;
    expect(p.retrievalQuery).toBe(STANDALONE);
    expect(p.rewrite).toBe(QueryRewrite.REWRITTEN);
    expect(p.rewriteNote).toContain(STUB_MODEL);
    expect(p.historyTurns).toBe(1);
    expect(p.retrieval!.mode).toBe(RetrievalMode.HYBRID);
    expect(p.retrieval!.topK).toBe(4);
    for (const list of p.lists) {
      expect(list.hits.length).toBeGreaterThan(0);
      list.hits.forEach((h, i) => expect(h.rank).toBe(i + 1));
      expect(list.hits[0].explain!.bm25Rank + list.hits[0].explain!.vectorRank).toBeGreaterThan(0);
    }
    expect(p.fused.map((f) => f.rank)).toEqual(p.fused.map((_, i) => i + 1));
    expect(p.fused.every((f) => f.listRank > 0)).toBe(true);
    expect(p.context.map((c) => c.number)).toEqual(p.context.map((_, i) => i + 1));
    expect(p.context[0].chunkId).toBe(turn.citations[0].chunkId);
    expect(p.model).toBe(STUB_MODEL);
    expect(p.extractive).toBe(false);
    expect(p.usage!.promptTokens).toBeGreaterThan(0);
    expect(p.resolvedMarkers).toBe(1);
    expect(p.citationChecks).toHaveLength(1);
    expect(p.markersUsed).toEqual([1]);
    expect(p.stages.map((s) => s.stage)).toEqual(["rewrite", "retrieve", "build-context", "evidence", "generate", "verify"]);
    expect(p.stages.every((s) => s.durationMs >= 0)).toBe(true);
    expect(p.durationMs).toBeGreaterThan(0);
  });

  it("lists, shows and deletes the conversation with its turns", async () => {
    const { client } = env();
    const listed = (await client.listConversations({ assistant: assistantName })).conversations;
    expect(listed.map((c) => c.id)).toEqual([conversationId]);
    expect(listed[0].title).toBe(FIRST_QUESTION);
    expect(listed[0].turnCount).toBe(2);
    const shown = await client.getConversation({ conversationId });
    expect(shown.turns.map((t) => [t.number, t.question])).toEqual([
      [1, FIRST_QUESTION],
      [2, FOLLOW_UP],
    ]);
    await client.deleteConversation({ conversationId });
    expect((await failure(() => client.getConversation({ conversationId }))).code).toBe(Code.NotFound);
    expect((await failure(() => client.getTurn({ turnId: secondTurnId }))).code).toBe(Code.NotFound);
  });

  it("answers bad input with the right codes", async () => {
    const { client } = env();
    const code = async (call: () => Promise<unknown>) => (await failure(call)).code;
    const drain = (request: Parameters<QuarryClient["chat"]>[0]) => () => chat(client, request);
    expect(await code(drain({ question: FOLLOW_UP, conversationId: "cv_0000000000000000" }))).toBe(Code.NotFound);
    expect(await code(drain({ question: FIRST_QUESTION, assistant: "no-such-assistant" }))).toBe(Code.NotFound);
    expect(await code(drain({ question: FIRST_QUESTION, assistant: assistantName, knowledgeBases: [manuals] }))).toBe(Code.InvalidArgument);
    expect(await code(drain({ question: "   ", assistant: assistantName }))).toBe(Code.InvalidArgument);
    expect(await code(() => client.createAssistant({ assistant: { name: `empty-${suffix}` } }))).toBe(Code.InvalidArgument);
    expect(await code(() => client.createAssistant({ assistant: { name: `ghost-${suffix}`, knowledgeBases: [{ knowledgeBase: "no-such-base" }] } }))).toBe(Code.NotFound);
    expect(await code(() => client.createAssistant({ assistant: { name: assistantName, knowledgeBases: [{ knowledgeBase: manuals }] } }))).toBe(Code.AlreadyExists);
    expect(
      await code(() => client.createAssistant({ assistant: { name: `twice-${suffix}`, knowledgeBases: [{ knowledgeBase: manuals }, { knowledgeBase: manuals }] } })),
    ).toBe(Code.InvalidArgument);
    expect(await code(() => client.createAssistant({ assistant: { name: `big-${suffix}`, knowledgeBases: [{ knowledgeBase: manuals, topK: 5000 }] } }))).toBe(
      Code.InvalidArgument,
    );
    expect(await code(() => client.updateAssistant({ assistant: assistantName, update: { name: assistantName } }))).toBe(Code.InvalidArgument);
    expect(await code(() => client.getAssistant({ assistant: "no-such-assistant" }))).toBe(Code.NotFound);
    expect(await code(() => client.getTurn({ turnId: "tn_missing" }))).toBe(Code.NotFound);
    expect(await code(() => client.deleteConversation({ conversationId: "cv_missing" }))).toBe(Code.NotFound);
    // The assistant is still whole after the refused update; deleting it works once.
    expect((await client.getAssistant({ assistant: assistantName })).assistant!.knowledgeBases).toHaveLength(2);
    await client.deleteAssistant({ assistant: assistantName });
    expect(await code(() => client.deleteAssistant({ assistant: assistantName }))).toBe(Code.NotFound);
  });
}
