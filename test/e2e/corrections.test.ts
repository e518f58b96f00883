// Managed corrections through the gateway, on the embedded Quarry with its SQLite catalog and, when
// OPENSEARCH_URL is set, with the index on OpenSearch: a wrong answer is corrected, the correction
// is ingested by the pipeline like any document, then outranks the original document for the
// question and a paraphrase, leaves other questions alone, and is gone once deleted. The answers
// are extractive (no chat model), so they show exactly which passage answered. The real embedding
// model (all-MiniLM-L6-v2) decides the gate.
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatFinal } from "../../gen/quarry/answer/v1/answer_pb.ts";
import { DocumentStatus, type Citation } from "../../gen/quarry/common/v1/common_pb.ts";
import type { Correction } from "../../gen/quarry/gateway/v1/corrections_pb.ts";
import type { QuarryClient } from "../../client/gateway-client.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { CORRECTION_RULE } from "../../services/answer/index.ts";
import { describeWithEngine } from "../support/engines.ts";
import { startEmbeddedQuarry } from "../support/embedded-quarry.ts";
import { failure, lastUpdate, upload, watchAll } from "./e2e-helpers.ts";
import { startOpenAiStub, type OpenAiStub, type StubChatMessage } from "../../lib/testing/openai-stub.ts";

const MANUAL = `# Skerry lighthouse manual

The lamp of the Skerry lighthouse is serviced every 30 days by the harbour crew, who replace the bulb and clean the lens.

The tower was painted white in 1921, after the storm that took the old red paint off.

The keeper lives in the cottage beside the tower and logs every passing ship.
`;
const QUESTION = "How often is the lighthouse lamp serviced?";
const PARAPHRASE = "How frequently is the lighthouse lamp serviced?";
/** Same subject, another question: all-MiniLM-L6-v2 puts it at 0.75 from QUESTION, under the 0.85 gate. */
const SAME_SUBJECT = "Who services the lighthouse lamp?";
const UNRELATED = "When was the tower painted white?";
const CORRECTED = "The lamp is serviced every 14 days since the 2024 maintenance contract.";

interface Answer {
  text: string;
  citations: Citation[];
  final: ChatFinal;
  turnId: string;
}

async function ask(client: QuarryClient, request: { question: string; assistant?: string; knowledgeBases?: string[] }): Promise<Answer> {
  const answer: Answer = { text: "", citations: [], final: undefined as unknown as ChatFinal, turnId: "" };
  for await (const { event } of client.chat(request)) {
    const e = event?.event;
    if (e?.case === "started") answer.turnId = e.value.turnId;
    else if (e?.case === "text") answer.text += e.value.text;
    else if (e?.case === "citation") answer.citations.push(e.value);
    else if (e?.case === "final") answer.final = e.value;
  }
  expect(answer.final, "the chat stream ended without a final event").toBeDefined();
  return answer;
}

function correctionsSuite(label: string, start: () => Promise<{ client: QuarryClient; url: string; stop(): Promise<void> }>) {
  describe(`managed corrections on embedded Quarry (${label})`, () => {
    let quarry: Awaited<ReturnType<typeof start>>;
    let client: QuarryClient;
    const suffix = randomBytes(3).toString("hex");
    const kb = `skerry-${suffix}`;
    const assistantName = `keeper-${suffix}`;
    let assistantId = "";
    let manualId = "";
    let wrongTurn = "";
    let correction: Correction;

    beforeAll(async () => {
      quarry = await start();
      client = quarry.client;
      await client.createKnowledgeBase({ name: kb });
      manualId = (await upload(client, kb, "skerry-manual.md", new TextEncoder().encode(MANUAL))).document!.id;
      expect(lastUpdate(await watchAll(client, [manualId]), manualId).status).toBe(DocumentStatus.READY);
      assistantId = (await client.createAssistant({ assistant: { name: assistantName, knowledgeBases: [{ knowledgeBase: kb }] } })).assistant!.id;
    }, 180_000);
    afterAll(async () => {
      await quarry?.stop();
    });

    it("answers from the document before any correction", async () => {
      const answer = await ask(client, { question: QUESTION, assistant: assistantName });
      expect(answer.text).toContain("every 30 days");
      expect(answer.citations[0].fileName).toBe("skerry-manual.md");
      expect(answer.final.correctionsUsed).toEqual([]);
      wrongTurn = answer.turnId;
      expect(wrongTurn).toMatch(/^tn_/);
      expect((await client.listCorrections({ assistant: assistantName })).corrections).toEqual([]);
    });

    it("refuses what cannot be corrected, saying why", async () => {
      const direct = await ask(client, { question: QUESTION, knowledgeBases: [kb] });
      const noAssistant = await failure(() => client.correctAnswer({ turnId: direct.turnId, correctedAnswer: CORRECTED }));
      expect(noAssistant.code).toBe(Code.FailedPrecondition);
      expect(noAssistant.rawMessage).toContain("not by an assistant: corrections belong to an assistant");
      expect((await failure(() => client.correctAnswer({ turnId: wrongTurn, correctedAnswer: "  " }))).code).toBe(Code.InvalidArgument);
      expect((await failure(() => client.correctAnswer({ turnId: "tn_0000", correctedAnswer: CORRECTED }))).code).toBe(Code.NotFound);
      const notACorrection = await failure(() => client.deleteCorrection({ correctionId: manualId }));
      expect(notACorrection.code).toBe(Code.InvalidArgument);
      expect(notACorrection.rawMessage).toContain("is not a correction");
      // Nothing was created by the refusals.
      expect((await client.getAssistant({ assistant: assistantName })).assistant!.correctionsKnowledgeBaseId).toBe("");
    });

    it("publishes a correction into the assistant's own corrections base, through the ingestion pipeline", async () => {
      correction = (await client.correctAnswer({ turnId: wrongTurn, correctedAnswer: CORRECTED })).correction!;
      expect(correction).toMatchObject({ turnId: wrongTurn, assistantId, question: QUESTION, originalQuestion: QUESTION, correctedAnswer: CORRECTED, author: "" });
      expect(correction.id).toBe(correction.document!.id);
      // WatchIngestion streams from the document's current state, and a correction of a few
      // sentences can be READY before the watch opens (CI saw only READY), so the pipeline's
      // work is proven by what it left: indexed chunks, counted when the document became ready.
      const log = await watchAll(client, [correction.id]);
      const ready = lastUpdate(log, correction.id);
      expect(ready.status).toBe(DocumentStatus.READY);
      expect(ready.chunkCount).toBeGreaterThan(0);

      const assistant = (await client.getAssistant({ assistant: assistantName })).assistant!;
      expect(assistant.correctionsKnowledgeBaseId).toBe(correction.knowledgeBaseId);
      const { knowledgeBases } = await client.listKnowledgeBases({});
      const base = knowledgeBases.find((k) => k.id === correction.knowledgeBaseId)!;
      expect(base.name).toBe(`${assistantName} · corrections`);
      expect(base.correctionsForAssistantId).toBe(assistantId);
      expect(knowledgeBases.find((k) => k.name === kb)!.correctionsForAssistantId).toBe("");
      // An UpdateAssistant cannot point the assistant at another base, nor lose its corrections.
      await client.updateAssistant({ assistant: assistantId, update: { ...assistant, systemPrompt: "Be brief.", correctionsKnowledgeBaseId: knowledgeBases.find((k) => k.name === kb)!.id } });
      expect((await client.getAssistant({ assistant: assistantId })).assistant!.correctionsKnowledgeBaseId).toBe(correction.knowledgeBaseId);

      const listed = (await client.listCorrections({ assistant: assistantName })).corrections;
      expect(listed.map((c) => [c.id, c.document!.status, c.correctedAnswer])).toEqual([[correction.id, DocumentStatus.READY, CORRECTED]]);
    });

    it("answers the question and a paraphrase from the correction first, and the turn records why", async () => {
      for (const question of [QUESTION, PARAPHRASE]) {
        const answer = await ask(client, { question, assistant: assistantName });
        expect(answer.citations[0].fileName, question).toBe(`correction-${wrongTurn}.txt`);
        expect(answer.text, question).toContain(CORRECTED);
        expect(answer.text, question).not.toContain("30 days");
        expect(answer.final.correctionsUsed, question).toEqual([correction.id]);

        const provenance = (await client.getTurn({ turnId: answer.turnId })).turn!.provenance!;
        expect(provenance.correctionsUsed).toEqual([correction.id]);
        expect(provenance.fused[0]).toMatchObject({ correction: true, knowledgeBaseId: correction.knowledgeBaseId, contextNumber: 1 });
        const list = provenance.lists.find((l) => l.corrections)!;
        expect(list.knowledgeBaseId).toBe(correction.knowledgeBaseId);
        expect(list.topK).toBe(3);
        const match = list.hits[0].correctionMatch!;
        expect(match.relevant, question).toBe(true);
        expect(match.method).toBe(question === QUESTION ? "same-question" : "embedding");
        if (question === PARAPHRASE) expect(match.similarity).toBeGreaterThanOrEqual(match.threshold);
        // The document's own list is still there, after the correction.
        expect(provenance.fused.some((f) => f.knowledgeBaseId !== correction.knowledgeBaseId && !f.correction)).toBe(true);
      }
    });

    it("leaves other questions to the documents, the same subject included", async () => {
      for (const [question, expected] of [
        [UNRELATED, "1921"],
        [SAME_SUBJECT, "harbour crew"],
      ]) {
        const answer = await ask(client, { question, assistant: assistantName });
        expect(answer.text, question).toContain(expected);
        expect(answer.text, question).not.toContain("14 days");
        expect(answer.citations.map((c) => c.fileName), question).not.toContain(`correction-${wrongTurn}.txt`);
        expect(answer.final.correctionsUsed, question).toEqual([]);
        const provenance = (await client.getTurn({ turnId: answer.turnId })).turn!.provenance!;
        const candidate = provenance.lists.find((l) => l.corrections)!.hits.find((h) => h.documentId === correction.id);
        // The corrections base's own recall found it; the gate kept it out.
        expect(candidate?.correctionMatch, question).toMatchObject({ method: "embedding", relevant: false });
        expect(candidate!.correctionMatch!.similarity).toBeLessThan(candidate!.correctionMatch!.threshold);
        expect(provenance.fused.every((f) => !f.correction)).toBe(true);
      }
    });

    it("takes a second correction of the turn as a new version of the same document, with more wordings", async () => {
      const again = (await client.correctAnswer({ turnId: wrongTurn, correctedAnswer: "Every 10 days, by the keeper himself.", question: `${QUESTION}\nWhen is the lamp looked after?` }))
        .correction!;
      expect(again.id).toBe(correction.id);
      expect(again.document!.version > correction.document!.version).toBe(true);
      expect(again.question).toBe(`${QUESTION}\nWhen is the lamp looked after?`);
      expect(lastUpdate(await watchAll(client, [again.id]), again.id).status).toBe(DocumentStatus.READY);
      const answer = await ask(client, { question: "When is the lamp looked after?", assistant: assistantName });
      expect(answer.text).toContain("Every 10 days, by the keeper himself.");
      expect(answer.final.correctionsUsed).toEqual([again.id]);
      expect((await client.listCorrections({ assistant: assistantId })).corrections).toHaveLength(1);
    });

    it("answers from the document again once the correction is deleted", async () => {
      await client.deleteCorrection({ correctionId: correction.id });
      expect((await client.listCorrections({ assistant: assistantName })).corrections).toEqual([]);
      const answer = await ask(client, { question: QUESTION, assistant: assistantName });
      expect(answer.text).toContain("every 30 days");
      expect(answer.citations[0].fileName).toBe("skerry-manual.md");
      expect(answer.final.correctionsUsed).toEqual([]);
      expect((await failure(() => client.getDocument({ documentId: correction.id }))).code).toBe(Code.NotFound);
    });

    it("answers from a correction longer than one chunk, found by a wording past its first chunk, and quotes it whole", async () => {
      const wordings = Array.from({ length: 12 }, (_, i) => `How do I test fog horn number ${i + 1} at the Skerry station?`);
      const steps = Array.from({ length: 14 }, (_, i) => `Step ${i + 1}: check the compressor valve ${i + 1} and write its pressure in the fog log.`);
      const answerText = `${steps.join(" ")} Finally, sound the horn for five seconds and listen from the jetty.`;
      const turn = (await ask(client, { question: wordings[11], assistant: assistantName })).turnId;
      const long = (await client.correctAnswer({ turnId: turn, correctedAnswer: answerText, question: wordings.join("\n") })).correction!;
      expect(lastUpdate(await watchAll(client, [long.id]), long.id).status).toBe(DocumentStatus.READY);
      const stored = (await client.getDocument({ documentId: long.id })).document!;
      expect(Number(stored.chunkCount)).toBeGreaterThanOrEqual(3);

      // The last wording stands past the first chunk: the gate reads it from the whole correction.
      const answer = await ask(client, { question: wordings[11], assistant: assistantName });
      expect(answer.final.correctionsUsed).toEqual([long.id]);
      expect(answer.text).toContain(`${answerText} [1]`);
      expect(answer.citations[0].fileName).toBe(`correction-${turn}.txt`);
      const provenance = (await client.getTurn({ turnId: answer.turnId })).turn!.provenance!;
      const candidates = provenance.lists.find((l) => l.corrections)!.hits;
      // One candidate for the correction, however many of its chunks the search found.
      expect(candidates.filter((h) => h.documentId === long.id)).toHaveLength(1);
      expect(candidates.find((h) => h.documentId === long.id)!.correctionMatch).toMatchObject({ question: wordings[11], method: "same-question", relevant: true });
      await client.deleteCorrection({ correctionId: long.id });
    });

    it("deletes the assistant with its corrections base, refusing while another assistant mounts that base", async () => {
      const baseId = (await client.getAssistant({ assistant: assistantName })).assistant!.correctionsKnowledgeBaseId;
      expect(baseId).toMatch(/^kb_/);
      // A second correction, so the base holds something when it goes.
      const turn = (await ask(client, { question: QUESTION, assistant: assistantName })).turnId;
      const second = (await client.correctAnswer({ turnId: turn, correctedAnswer: CORRECTED })).correction!;
      expect(second.knowledgeBaseId).toBe(baseId);
      await watchAll(client, [second.id]);

      const borrower = `borrower-${suffix}`;
      await client.createAssistant({ assistant: { name: borrower, knowledgeBases: [{ knowledgeBase: kb }, { knowledgeBase: baseId }] } });
      const refused = await failure(() => client.deleteAssistant({ assistant: assistantName }));
      expect(refused.code).toBe(Code.FailedPrecondition);
      expect(refused.rawMessage).toBe(
        `the corrections knowledge base of ${assistantName} (${baseId}) is mounted by the assistant ${borrower}; unmount it there (UpdateAssistant) before deleting ${assistantName}`,
      );
      expect((await client.getAssistant({ assistant: assistantName })).assistant!.id).toBe(assistantId);
      // An assistant without corrections takes nothing with it.
      expect((await client.deleteAssistant({ assistant: borrower })).correctionsKnowledgeBaseId).toBe("");

      expect((await client.deleteAssistant({ assistant: assistantName })).correctionsKnowledgeBaseId).toBe(baseId);
      expect((await failure(() => client.getAssistant({ assistant: assistantId }))).code).toBe(Code.NotFound);
      expect((await failure(() => client.getKnowledgeBase({ knowledgeBase: baseId }))).code).toBe(Code.NotFound);
      expect((await failure(() => client.getDocument({ documentId: second.id }))).code).toBe(Code.NotFound);
      const left = (await client.listKnowledgeBases({})).knowledgeBases.map((k) => k.name);
      expect(left).toContain(kb);
      expect(left).not.toContain(`${assistantName} · corrections`);
      // Its turns stay readable, as the conversations of a deleted assistant do.
      expect((await client.getTurn({ turnId: turn })).turn!.provenance!.assistantId).toBe(assistantId);
    });
  });
}

correctionsSuite("SQLite", async () => startEmbeddedQuarry());

describeWithEngine("OPENSEARCH_URL", "managed corrections with the index on OpenSearch", (opensearchUrl) => {
  correctionsSuite("OpenSearch", async () => {
    const prefix = `quarry-corrections-${randomBytes(4).toString("hex")}`;
    const quarry = await startEmbeddedQuarry({ env: { OPENSEARCH_URL: opensearchUrl, QUARRY_OPENSEARCH_PREFIX: prefix } });
    return { client: quarry.client, url: quarry.url, stop: async () => (await quarry.stop(), await deleteOpenSearchNamespace(opensearchUrl, prefix)) };
  });
});

// With a chat model (the OpenAI-compatible stub): the model is shown the correction first, marked,
// and told to answer from it; the stub answers from whichever passage the prompt marks a correction.
describe("managed corrections with a chat model", () => {
  let quarry: Awaited<ReturnType<typeof startEmbeddedQuarry>>;
  let stub: OpenAiStub;
  const chats = () => stub.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body.messages as StubChatMessage[]);
  beforeAll(async () => {
    stub = await startOpenAiStub({ reply: (messages) => (messages.at(-1)!.content.includes("[1] (correction)") ? "Every 14 days [1]." : "Every 30 days [1].") });
    quarry = await startEmbeddedQuarry({ env: { OPENAI_BASE_URL: stub.url, QUARRY_CHAT_MODEL: "stub-chat", OPENAI_API_KEY: "test-key" } });
    await quarry.client.createKnowledgeBase({ name: "llm-skerry" });
    const doc = (await upload(quarry.client, "llm-skerry", "skerry-manual.md", new TextEncoder().encode(MANUAL))).document!;
    await watchAll(quarry.client, [doc.id]);
    await quarry.client.createAssistant({ assistant: { name: "llm-keeper", knowledgeBases: [{ knowledgeBase: "llm-skerry" }] } });
  }, 180_000);
  afterAll(async () => {
    await quarry?.stop();
    await stub?.close();
  });

  it("puts the correction first in the prompt, marked, with the rule to answer from it", async () => {
    const before = await ask(quarry.client, { question: QUESTION, assistant: "llm-keeper" });
    expect(before.text).toBe("Every 30 days [1].");
    expect(chats().at(-1)![0].content).not.toContain(CORRECTION_RULE);
    const correction = (await quarry.client.correctAnswer({ turnId: before.turnId, correctedAnswer: CORRECTED })).correction!;
    await watchAll(quarry.client, [correction.id]);

    const after = await ask(quarry.client, { question: PARAPHRASE, assistant: "llm-keeper" });
    expect(after.text).toBe("Every 14 days [1].");
    expect(after.citations[0].fileName).toBe(`correction-${before.turnId}.txt`);
    expect(after.final.correctionsUsed).toEqual([correction.id]);
    const [system, user] = [chats().at(-1)![0].content, chats().at(-1)!.at(-1)!.content];
    expect(system).toContain(CORRECTION_RULE);
    expect(user).toContain(`Knowledge base: llm-keeper · corrections\n\n[1] (correction) (correction-${before.turnId}.txt)\nQuestion: ${QUESTION}\n\nAnswer: ${CORRECTED}`);
    // The document is still in the context, after the correction.
    expect(user).toContain("[2] (skerry-manual.md");
  });
});

// `quarry correct` as a person runs it, against an embedded Quarry.
const BIN = resolve(process.cwd(), "bin/quarry.mjs");

function quarryCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, QUARRY_API_KEY: "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

describe("quarry correct on embedded Quarry", () => {
  let quarry: Awaited<ReturnType<typeof startEmbeddedQuarry>>;
  beforeAll(async () => {
    quarry = await startEmbeddedQuarry();
    await quarry.client.createKnowledgeBase({ name: "cli-skerry" });
    const doc = (await upload(quarry.client, "cli-skerry", "skerry-manual.md", new TextEncoder().encode(MANUAL))).document!;
    await watchAll(quarry.client, [doc.id]);
    await quarry.client.createAssistant({ assistant: { name: "cli-keeper", knowledgeBases: [{ knowledgeBase: "cli-skerry" }] } });
  }, 180_000);
  afterAll(async () => {
    await quarry?.stop();
  });

  it("corrects a turn, waits until it is in use, lists and deletes it", async () => {
    const turn = (await ask(quarry.client, { question: QUESTION, assistant: "cli-keeper" })).turnId;
    const url = ["--url", quarry.url];
    const published = await quarryCli(["correct", turn, CORRECTED, "--question", QUESTION, PARAPHRASE, "--wait", ...url]);
    expect(published.code, published.stderr).toBe(0);
    const id = /^published correction (\S+) to knowledge base (kb_\S+) \(assistant as_/.exec(published.stdout)?.[1];
    expect(id, published.stdout).toBeDefined();
    expect(published.stdout).toContain(`  Q: ${QUESTION}\n  Q: ${PARAPHRASE}\n  A: ${CORRECTED}`);
    expect(published.stdout).toContain("ready: questions that match it are answered from it first");
    const asked = await ask(quarry.client, { question: PARAPHRASE, assistant: "cli-keeper" });
    expect(asked.final.correctionsUsed).toEqual([id]);
    const shown = await quarryCli(["turn", "show", asked.turnId, ...url]);
    expect(shown.stdout).toMatch(/corrections list kb_\S+: priority 0, top-k 3, 1 hit\(s\)/);
    expect(shown.stdout).toContain(`question "${PARAPHRASE}": same-question 1.000 (threshold 1) → matches, ranked first`);
    expect(shown.stdout).toContain(`answered from correction(s): ${id}`);
    expect((await quarryCli(["kb", "list", ...url])).stdout).toMatch(/cli-keeper · corrections \(corrections of as_[0-9a-f]+\)/);

    const listed = await quarryCli(["correct", "list", "--assistant", "cli-keeper", ...url]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\tready\\tturn ${turn}\\t`));
    const refused = await quarryCli(["correct", turn, "", ...url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("the corrected answer is empty (invalid_argument)");

    expect((await quarryCli(["correct", "delete", id!, ...url])).stdout).toBe(`deleted correction ${id}\n`);
    expect((await quarryCli(["correct", "list", "--assistant", "cli-keeper", ...url])).stdout).toBe('no corrections for cli-keeper; `quarry correct TURN_ID "answer"` makes one\n');

    // The assistant goes with its corrections base.
    const base = /to knowledge base (kb_\S+)/.exec(published.stdout)![1];
    const deleted = await quarryCli(["assistant", "delete", "cli-keeper", ...url]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`deleted cli-keeper and its corrections knowledge base ${base}\n`);
    expect((await quarryCli(["kb", "list", ...url])).stdout).not.toContain("cli-keeper · corrections");
  });
});
