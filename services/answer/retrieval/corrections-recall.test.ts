import { describe, expect, it } from "vitest";
import type { KnowledgeBase } from "../../../lib/domain.ts";
import { correctionDocumentText } from "../../../lib/correction-document.ts";
import { CORRECTION_RULE, correctionExtract } from "../answering/correction-answer.ts";
import { conversationMessages } from "../conversation/conversation-prompt.ts";
import { correctionsFirst, correctionsMount, openWithCorrections } from "./corrections-recall.ts";
import { makeContext, makeHit } from "../testing/test-hits.ts";

const base = (id: string, embeddingModel = "all-MiniLM-L6-v2-int8") => ({ id, name: id, embeddingModel }) as KnowledgeBase;
const deps = { embed: async () => ({ vector: new Float32Array([1]), knownTokenShare: 1 }), search: async () => [] };

describe("openWithCorrections", () => {
  it("opens the corrections base with the assistant's bases, in one look-up, and hands it back apart", async () => {
    const asked: string[][] = [];
    const opened = await openWithCorrections(async (_q, _m, names) => (asked.push(names), { knowledgeBases: names.map((n) => base(n)), deps }), "q", "hybrid", ["manual"], "kb_corr");
    expect(asked).toEqual([["manual", "kb_corr"]]);
    expect(opened.knowledgeBases.map((kb) => kb.id)).toEqual(["manual"]);
    expect(opened.corrections?.id).toBe("kb_corr");
  });

  it("answers without corrections, saying why, when the corrections base is gone; the assistant's own bases still fail loudly", async () => {
    const open = async (_q: string, _m: string, names: string[]) => {
      const missing = names.find((n) => n === "kb_gone" || n === "lost");
      if (missing) throw new Error(`knowledge base ${missing} not found`);
      return { knowledgeBases: names.map((n) => base(n)), deps };
    };
    const opened = await openWithCorrections(open, "q", "hybrid", ["manual"], "kb_gone");
    expect(opened.corrections).toBeUndefined();
    expect(opened.correctionsSkipped).toMatch(/kb_gone could not be opened \(knowledge base kb_gone not found\); answered without corrections/);
    await expect(openWithCorrections(open, "q", "hybrid", ["lost"], "kb_corr")).rejects.toThrow(/lost not found/);
    expect((await openWithCorrections(open, "q", "hybrid", ["manual"], "")).corrections).toBeUndefined();
  });
});

describe("correctionsMount and correctionsFirst", () => {
  it("searches the corrections base for a small top-k of its own and embeds questions with its model", async () => {
    const models: (string | undefined)[] = [];
    const mount = correctionsMount(base("kb_corr", "bge-small-zh-v1.5"), { embed: async (_t, model) => (models.push(model), { vector: new Float32Array([1]), knownTokenShare: 1 }) });
    expect(mount).toMatchObject({ knowledgeBaseId: "kb_corr", topK: 3 });
    expect(mount.corrections?.embedder?.model).toBe("bge-small-zh-v1.5");
    await mount.corrections!.embedder!.embed("问题");
    expect(models).toEqual(["bge-small-zh-v1.5"]);
  });

  it("keeps corrections first after a reranker or a fusion reordered them, each group in its own order", () => {
    const hits = ["d1", "c1", "d2", "c2"].map((id) => makeHit(id, id));
    expect(correctionsFirst(hits, (h) => h.chunk.id.startsWith("c")).map((h) => h.chunk.id)).toEqual(["c1", "c2", "d1", "d2"]);
    expect(correctionsFirst(hits, undefined)).toBe(hits);
  });
});

describe("answering from a correction", () => {
  const context = makeContext([correctionDocumentText(["How often is the lamp serviced?"], "Every 14 days, by the keeper."), "The lamp is serviced every 30 days."]);
  const isFirst = (c: { number: number }) => c.number === 1;

  it("quotes the correction's answer whole and cites it, when it is first in the context", () => {
    const extract = correctionExtract("How often is the lamp serviced?", context, isFirst);
    expect(extract?.text).toBe("Extractive answer (no language model configured), quoted from the sources:\n\nEvery 14 days, by the keeper. [1]");
    expect(extract?.sources).toEqual([context[0]]);
    expect(correctionExtract("灯多久保养一次？", context, isFirst)?.text).toBe("摘录式回答（未配置语言模型），摘自来源：\n\nEvery 14 days, by the keeper.[1]");
  });

  it("leaves the answer to the extractive answerer when no correction leads the context", () => {
    expect(correctionExtract("How often?", context, () => false)).toBeUndefined();
    expect(correctionExtract("How often?", [], isFirst)).toBeUndefined();
  });

  it("marks corrections in the model's context and tells it to answer from them", () => {
    const chunks = context.map((c, i) => ({ ...c, hit: { ...c.hit, chunk: { ...c.hit.chunk, knowledgeBaseId: i === 0 ? "kb_corr" : "kb_manual" } } }));
    const options = { systemPrompt: "", history: [], hideFileNames: true, baseNames: new Map([["kb_corr", "keeper · corrections"], ["kb_manual", "manual"]]) };
    const [system, user] = conversationMessages("How often?", chunks, { ...options, correctionBases: new Set(["kb_corr"]) });
    expect(system.content.endsWith(CORRECTION_RULE)).toBe(true);
    expect(user.content).toContain("Knowledge base: keeper · corrections\n\n[1] (correction)\nQuestion: How often is the lamp serviced?");
    const [plain] = conversationMessages("How often?", chunks.slice(1), { ...options, correctionBases: new Set(["kb_corr"]) });
    expect(plain.content).not.toContain(CORRECTION_RULE);
  });
});
