// Abstention end to end on the embedded Quarry, over real HTTP: a question the knowledge base does
// not cover is answered plainly that it does not, with the closest passages listed as such, by the
// extractive answerer and — without being asked — the chat model (the OpenAI-compatible stub); the
// final event, the stored turn and `quarry ask` say so. A follow-up without a chat model is
// searched with the previous question's words and still has to be about its own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryRewrite } from "../../gen/quarry/answer/v1/answer_pb.ts";
import { startOpenAiStub, type OpenAiStub } from "../../lib/testing/openai-stub.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { collectChat, runQuarryCli, upload, watchAll } from "./e2e-helpers.ts";

const MANUAL = [
  "# Skerry Point lighthouse",
  "",
  "The lighthouse lamp is serviced every 14 days by the keeper.",
  "The lamp was first lit in 1858.",
  "",
  "# Boathouse",
  "",
  "The spare key hangs behind the tide table in the boathouse.",
].join("\n");
const OFF_TOPIC = "How long should green tea steep?";
const NOT_ANSWERED = /^The selected knowledge bases do not answer this question\.\n\nClosest passages, not an answer: \[1\]/;

async function ingest(quarry: EmbeddedQuarryFixture, kb: string) {
  await quarry.client.createKnowledgeBase({ name: kb });
  const doc = await upload(quarry.client, kb, "skerry.md", new TextEncoder().encode(MANUAL));
  await watchAll(quarry.client, [doc.document!.id]);
}

describe("abstention without a chat model", () => {
  let quarry: EmbeddedQuarryFixture;
  const kb = "skerry";
  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    await ingest(quarry, kb);
  }, 120_000);
  afterAll(async () => {
    await quarry?.stop();
  });

  it("answers a covered question, and says plainly that an uncovered one is not answered, listing the closest passages", async () => {
    const covered = await collectChat(quarry.client, { question: "How often is the lighthouse lamp serviced?", knowledgeBases: [kb] });
    expect(covered.final.answered).toBe(true);
    expect(covered.text).toContain("every 14 days");
    expect(covered.final.evidence!.coverage).toBeGreaterThanOrEqual(0.5);

    const off = await collectChat(quarry.client, { question: OFF_TOPIC, knowledgeBases: [kb] });
    expect(off.final.answered).toBe(false);
    expect(off.text).toMatch(NOT_ANSWERED);
    expect(off.text).not.toContain("14 days");
    expect(off.final.answeredReason).toMatch(/^the best document holds 0\.\d\d of the question's weighted content words \(0\.5 needed\); it lacks: long, green, tea, steep$/);
    expect(off.final.evidence).toMatchObject({ threshold: 0.5, questionTerms: ["long", "green", "tea", "steep"] });
    expect(off.citations.length).toBeGreaterThan(0);
    // No claim is made, so none is checked.
    expect(off.final.resolvedMarkers).toBe(0);

    const started = (await quarry.client.listConversations({})).conversations.find((c) => c.title === OFF_TOPIC)!;
    const { turns } = await quarry.client.getConversation({ conversationId: started.id });
    expect(turns[0].provenance).toMatchObject({ answered: false, answeredReason: off.final.answeredReason });
    expect(turns[0].provenance!.stages.find((s) => s.stage === "evidence")!.note).toMatch(/^not answered: the best document holds/);
  });

  it("searches a follow-up with the previous question's words, and answers it only when a passage holds its own", async () => {
    const first = await collectChat(quarry.client, { question: "When was the lighthouse lamp first lit?", knowledgeBases: [kb] });
    let conversationId = "";
    for (const c of (await quarry.client.listConversations({})).conversations) if (c.title === "When was the lighthouse lamp first lit?") conversationId = c.id;
    expect(first.final.answered).toBe(true);
    const keeper = await collectChat(quarry.client, { question: "And who services it?", conversationId });
    expect(keeper.final.retrievalQuery).toBe("lighthouse lamp first lit And who services it?");
    expect(keeper.final.answered).toBe(true);
    expect(keeper.text).toContain("keeper");
    // The previous question is now "And who services it?": its words go with the next one.
    const who = await collectChat(quarry.client, { question: "And who do I call?", conversationId });
    expect(who.final.rewrite).toBe(QueryRewrite.PREVIOUS_TERMS);
    expect(who.final.retrievalQuery).toBe("services And who do I call?");
    expect(who.final.answered).toBe(false);
    expect(who.final.answeredReason).toMatch(/^the best document holds 0\.00 of the question's weighted content words \(0\.5 needed\); it lacks: call$/);
    expect(who.text).toMatch(NOT_ANSWERED);
  });

  it("prints the same from `quarry ask`", async () => {
    const { code, stdout } = await runQuarryCli(["ask", OFF_TOPIC, "--kb", kb, "--url", quarry.url]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^The selected knowledge bases do not answer this question\./);
    expect(stdout).toContain("(not answered: the best document holds");
    expect(stdout).toContain("\nClosest passages, not an answer:\n  [1] skerry.md");
    expect(stdout).not.toContain("Sources:");
  });
});

describe("abstention with a chat model", () => {
  let quarry: EmbeddedQuarryFixture;
  let stub: OpenAiStub;
  const kb = "skerry-model";
  beforeAll(async () => {
    stub = await startOpenAiStub({ reply: () => "The lamp is serviced every 14 days [1]." });
    quarry = await startEmbeddedQuarry({ env: { OPENAI_BASE_URL: stub.url, QUARRY_CHAT_MODEL: "stub-model", OPENAI_API_KEY: "test-key" } });
    await ingest(quarry, kb);
  }, 120_000);
  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
  });

  it("does not ask the model when the evidence does not cover the question, and asks it when it does", async () => {
    const off = await collectChat(quarry.client, { question: OFF_TOPIC, knowledgeBases: [kb] });
    expect(stub.requests).toHaveLength(0);
    expect(off.final).toMatchObject({ answered: false, extractive: false, model: "stub-model" });
    expect(off.text).toMatch(NOT_ANSWERED);
    const covered = await collectChat(quarry.client, { question: "How often is the lighthouse lamp serviced?", knowledgeBases: [kb] });
    expect(stub.requests).toHaveLength(1);
    expect(covered.final.answered).toBe(true);
    expect(covered.text).toBe("The lamp is serviced every 14 days [1].");
  });
});
