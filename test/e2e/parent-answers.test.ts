// Parents in the answer's context, end to end through the gateway of an embedded Quarry, on SQLite
// and on OpenSearch: a base chunked with parent: section answers with the whole section as the
// context entry (each matched section once), and the citation still points at the child chunk the
// cited sentence comes from, naming the section. The chat model is the OpenAI-compatible stub; the
// embedder, the chunker and the engines are real.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ParentMode, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";
import type { Env } from "../../lib/config.ts";
import { startOpenAiStub, type OpenAiStub, type StubChatMessage } from "../../lib/testing/openai-stub.ts";
import { deleteOpenSearchNamespace } from "../../services/index/index.ts";
import { COMPANY_MARKDOWN } from "../fixtures/fixture-texts.ts";
import { startEmbeddedQuarry, type EmbeddedQuarryFixture } from "../support/embedded-quarry.ts";
import { engineAddress } from "../support/engines.ts";
import { collectChat, flat, upload, watchAll } from "./e2e-helpers.ts";

const SECTION_START = COMPANY_MARKDOWN.indexOf("## 1890s–1930s");
const SECTION_END = COMPANY_MARKDOWN.indexOf("thirty years.") + "thirty years.".length;
const SECTION = COMPANY_MARKDOWN.slice(SECTION_START, SECTION_END);
const QUESTION = "When was the Model 12 balance introduced?";
const CITED = "The Model 12 balance was introduced in 1927";

function describeParentAnswers(backend: string, backendEnv: () => Env, cleanup: () => Promise<void> = async () => {}) {
  describe(`answers read parents (${backend})`, () => {
    let quarry: EmbeddedQuarryFixture;
    let chat: OpenAiStub;
    let prompts: string[] = [];
    const kb = `sections-${randomBytes(3).toString("hex")}`;

    beforeAll(async () => {
      chat = await startOpenAiStub({
        reply: (messages: StubChatMessage[]) => {
          prompts.push(messages.filter((m) => m.role === "user").at(-1)!.content);
          return `${CITED} [1].`;
        },
      });
      quarry = await startEmbeddedQuarry({ env: { ...backendEnv(), OPENAI_BASE_URL: chat.url, QUARRY_CHAT_MODEL: "stub-chat" } });
      await quarry.client.createKnowledgeBase({ name: kb, chunking: { chunkSize: 48, chunkOverlap: 8, parent: ParentMode.SECTION } });
      const doc = await upload(quarry.client, kb, "company.md", new TextEncoder().encode(COMPANY_MARKDOWN));
      await watchAll(quarry.client, [doc.document!.id], 120_000);
    }, 180_000);

    afterAll(async () => {
      await quarry?.stop();
      await chat?.close();
      await cleanup();
    });

    it("puts the matched section in the context once and cites the child chunk the sentence comes from", async () => {
      prompts = [];
      const { text, citations, final } = await collectChat(quarry.client, { question: QUESTION, knowledgeBases: [kb], settings: { mode: RetrievalMode.HYBRID, topK: 8 } });
      expect(text).toBe(`${CITED} [1].`);

      // The whole section is entry [1], its text once, though several of its chunks matched.
      const prompt = prompts.at(-1)!;
      const entry = prompt.slice(prompt.indexOf("[1] ("), prompt.indexOf("[2] (") > 0 ? prompt.indexOf("[2] (") : undefined);
      expect(entry.startsWith("[1] (company.md, Tallis Instruments > 1890s–1930s)\n## 1890s–1930s")).toBe(true);
      expect(flat(entry)).toContain(flat(SECTION));
      expect(prompt.split("The Model 12 balance, introduced in 1927").length - 1).toBe(1);
      expect(prompt.split("The first Tallis workshop made beam balances").length - 1).toBe(1);

      // The citation is the child: a span inside the section holding the sentence, not the section.
      expect(citations).toHaveLength(1);
      const [citation] = citations;
      expect(citation.marker).toBe(1);
      expect(citation.startOffset).toBeGreaterThanOrEqual(SECTION_START);
      expect(citation.endOffset).toBeLessThanOrEqual(SECTION_END);
      expect(citation.endOffset - citation.startOffset).toBeLessThan(SECTION.length);
      expect(COMPANY_MARKDOWN.slice(citation.startOffset, citation.endOffset)).toContain("introduced in 1927");
      expect(citation.sectionPath).toEqual(["Tallis Instruments", "1890s–1930s"]);
      expect(citation.parent).toMatchObject({ startOffset: SECTION_START, sectionPath: ["Tallis Instruments", "1890s–1930s"] });
      expect(COMPANY_MARKDOWN.slice(citation.parent!.startOffset, citation.parent!.endOffset).trim()).toBe(SECTION);
      // Exactly one of the base's child chunks, as PreviewChunks cuts them with the base's settings.
      const preview = await quarry.client.previewChunks({ fileName: "company.md", content: new TextEncoder().encode(COMPANY_MARKDOWN), knowledgeBase: kb });
      expect(preview.chunks.some((c) => c.startOffset === citation.startOffset && c.endOffset === citation.endOffset)).toBe(true);
      expect(final.resolvedMarkers).toBe(1);
      expect(final.unsupportedMarkers).toBe(0);
    });

    it("GetTurn's provenance says which parent the context entry held and which matched chunks it folded in", async () => {
      const assistant = `reader-${randomBytes(3).toString("hex")}`;
      await quarry.client.createAssistant({ assistant: { name: assistant, knowledgeBases: [{ knowledgeBase: kb }], retrieval: { mode: RetrievalMode.HYBRID, topK: 8 } } });
      let turnId = "";
      for await (const { event } of quarry.client.chat({ question: QUESTION, assistant })) {
        if (event?.event.case === "started") turnId = event.event.value.turnId;
      }
      const p = (await quarry.client.getTurn({ turnId })).turn!.provenance!;
      const first = p.context[0];
      expect(first.parent).toMatchObject({ startOffset: SECTION_START, sectionPath: ["Tallis Instruments", "1890s–1930s"] });
      expect(first.matchedChunkIds[0]).toBe(first.chunkId);
      // Every fused hit of that section is in entry 1; no entry repeats a section.
      const inFirst = p.fused.filter((h) => h.contextNumber === 1).map((h) => h.chunkId);
      expect(new Set(inFirst)).toEqual(new Set(first.matchedChunkIds));
      const sections = p.context.filter((c) => c.parent).map((c) => c.parent!.index);
      expect(new Set(sections).size).toBe(sections.length);
      expect(p.stages.find((s) => s.stage === "parents")?.note).toMatch(/^\d+ parents read \(\d+ chunks\)$/);
    });
  });
}

describeParentAnswers("SQLite", () => ({}));

const opensearch = engineAddress("OPENSEARCH_URL");
if (opensearch) {
  const prefix = `quarry-parents-${randomBytes(4).toString("hex")}`;
  describeParentAnswers("OpenSearch", () => ({ OPENSEARCH_URL: opensearch, QUARRY_OPENSEARCH_PREFIX: prefix }), () => deleteOpenSearchNamespace(opensearch, `${prefix}-`));
} else {
  describe.skip("answers read parents on OpenSearch (skipped: OPENSEARCH_URL not set)", () => {});
}
