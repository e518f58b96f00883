import { describe, expect, it } from "vitest";
import { conversationMessages, historyMessages, renderGroupedContext } from "./conversation-prompt.ts";
import { cleanRewrite, rewriteFollowUp, REWRITE_INSTRUCTION } from "./follow-up-rewriter.ts";
import { makeHit } from "../testing/test-hits.ts";

const chunk = (number: number, kb: string, text: string, fileName = `${kb}.md`) => {
  const hit = makeHit(`c${number}`, text, { fileName, page: number === 1 ? 3 : 0 });
  return { number, hit: { ...hit, chunk: { ...hit.chunk, knowledgeBaseId: kb } }, tokens: 5 };
};

describe("historyMessages", () => {
  it("keeps the last rounds as user and assistant messages, without the old markers", () => {
    const turns = [
      { question: "q1", answer: "a1 [1]" },
      { question: "q2", answer: "It is red [1][2]. And round 【3】." },
    ];
    expect(historyMessages(turns, 1)).toEqual([
      { role: "user", content: "q2" },
      { role: "assistant", content: "It is red. And round." },
    ]);
    expect(historyMessages(turns, 5)).toHaveLength(4);
    expect(historyMessages(turns, 0)).toEqual([]);
  });
});

describe("renderGroupedContext", () => {
  it("heads each knowledge base's chunks when there are several, and hides file names when asked", () => {
    const chunks = [chunk(1, "kb_m", "Lens from Paris."), chunk(2, "kb_m", "Lit in 1858."), chunk(3, "kb_f", "Birmingham, says a post.")];
    const names = new Map([
      ["kb_m", "manuals"],
      ["kb_f", "forum"],
    ]);
    const shown = renderGroupedContext(chunks, { hideFileNames: false, baseNames: names });
    expect(shown).toBe(
      "Knowledge base: manuals\n\n[1] (kb_m.md, p. 3)\nLens from Paris.\n\n[2] (kb_m.md)\nLit in 1858.\n\nKnowledge base: forum\n\n[3] (kb_f.md)\nBirmingham, says a post.",
    );
    const hidden = renderGroupedContext(chunks, { hideFileNames: true, baseNames: names });
    expect(hidden).not.toContain(".md");
    expect(hidden).toContain("[1] (p. 3)\nLens from Paris.");
    expect(hidden).toContain("[2]\nLit in 1858.");
  });

  it("adds no header for a single knowledge base", () => {
    expect(renderGroupedContext([chunk(1, "kb_m", "Only one.")], { hideFileNames: false, baseNames: new Map() })).toBe("[1] (kb_m.md, p. 3)\nOnly one.");
  });
});

describe("conversationMessages", () => {
  it("puts the assistant's instructions before the rules and the history before the question", () => {
    const history = historyMessages([{ question: "Where?", answer: "Paris [1]." }], 3);
    const messages = conversationMessages("When?", [chunk(1, "kb_m", "Lit in 1858.")], { systemPrompt: "Be a keeper.", history, hideFileNames: false, baseNames: new Map() });
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(messages[0].content.startsWith("Be a keeper.\n\nYou answer questions")).toBe(true);
    expect(messages[3].content).toContain("[1] (kb_m.md, p. 3)\nLit in 1858.");
    expect(messages[3].content.endsWith("Question: When?")).toBe(true);
    const plain = conversationMessages("When?", [], { systemPrompt: " ", history: [], hideFileNames: false, baseNames: new Map() });
    expect(plain[0].content.startsWith("You answer questions")).toBe(true);
  });
});

describe("cleanRewrite", () => {
  it("takes the first line without a label or quotes", () => {
    expect(cleanRewrite('\n  Question: "When was the lens lit?"\nBecause…')).toBe("When was the lens lit?");
    expect(cleanRewrite("「灯塔的透镜是哪年点亮的？」")).toBe("灯塔的透镜是哪年点亮的？");
    expect(cleanRewrite("   \n")).toBe("");
  });
});

describe("rewriteFollowUp", () => {
  const model = (reply: string) => {
    const seen: { role: string; content: string }[][] = [];
    return {
      seen,
      name: "m",
      async *stream(messages: { role: "system" | "user" | "assistant"; content: string }[]) {
        seen.push(messages);
        yield* reply.match(/.{1,3}/gs) ?? [];
      },
    };
  };
  const history = historyMessages([{ question: "Where was the lens made?", answer: "In Paris [1]." }], 3);

  it("sends the conversation as a transcript and returns the model's standalone question", async () => {
    const m = model("Question: When was the lens made?\n");
    const outcome = await rewriteFollowUp(m, history, "And when?", { maxChars: 100 });
    expect(outcome).toEqual({ query: "When was the lens made?", note: "rewritten by m" });
    expect(m.seen[0][0].content).toContain(REWRITE_INSTRUCTION);
    expect(m.seen[0][1].content).toBe("Conversation:\nUser: Where was the lens made?\nAssistant: In Paris.\n\nLast question: And when?");
  });

  it("gives no query for an empty or overlong reply, saying why", async () => {
    expect(await rewriteFollowUp(model("  \n"), history, "And when?", { maxChars: 100 })).toEqual({ note: "m returned no question; searched as asked" });
    expect((await rewriteFollowUp(model("x".repeat(101)), history, "And when?", { maxChars: 100 })).note).toContain("longer than 100 characters");
  });
});
