import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { QueryRewrite, TurnSchema, type Turn } from "../../gen/quarry/answer/v1/answer_pb.ts";
import { AssistantSchema, ConversationSchema, type Conversation } from "../../gen/quarry/common/v1/assistant_pb.ts";
import type { KnowledgeBase, SearchQuery } from "../../lib/domain.ts";
import { InvalidInputError, NotFoundError, UnavailableError } from "../../lib/errors.ts";
import type { ChatMessage, ChatModel } from "./chat-models/chat-model.ts";
import { chatTurn, type ChatTurnDeps, type ChatTurnEvent, type ConversationPort } from "./chat-turn.ts";
import type { RetrievalDeps } from "./retrieval/retrieval-stage.ts";
import { makeHit } from "./testing/test-hits.ts";

const kb = (id: string): KnowledgeBase =>
  ({ id, name: `${id}-name`, description: "", embeddingModel: "m", embeddingDimension: 2, chunking: { strategy: "recursive", chunkSize: 100, chunkOverlap: 0, separators: [] } }) as unknown as KnowledgeBase;

function world() {
  const conversations = new Map<string, { conversation: Conversation; turns: Turn[] }>();
  const saved: Turn[] = [];
  const port: ConversationPort = {
    async getAssistant(name) {
      if (name !== "helper") throw new NotFoundError(`no assistant ${name}`);
      return create(AssistantSchema, { id: "as_1", name: "helper", systemPrompt: "Be brief.", knowledgeBases: [{ knowledgeBase: "kb_a", topK: 1, priority: 1 }], hideFileNames: true });
    },
    async getConversation(id) {
      const found = conversations.get(id);
      if (!found) throw new NotFoundError(`no conversation ${id}`);
      return found;
    },
    async createConversation(input) {
      const conversation = create(ConversationSchema, { id: `cv_${conversations.size + 1}`, ...input });
      conversations.set(conversation.id, { conversation, turns: [] });
      return conversation;
    },
    async saveTurn(turn) {
      saved.push(turn);
      const held = conversations.get(turn.conversationId)!;
      held.turns.push(create(TurnSchema, { ...turn, number: held.turns.length + 1 }));
      return turn;
    },
  };
  const queries: SearchQuery[] = [];
  const searchDeps: RetrievalDeps = {
    embed: async () => ({ vector: new Float32Array([1, 0]), knownTokenShare: 1 }),
    search: async (q) => {
      queries.push(q);
      return [makeHit(`${q.knowledgeBaseIds[0]}-1`, "The lamp was lit in 1858 at Skerry Point.")];
    },
  };
  const opened = (names: string[], retrieval: RetrievalDeps = searchDeps) => ({ knowledgeBases: names.map((n) => kb(n.replace(/-name$/, ""))), deps: retrieval });
  const deps = (over: Partial<ChatTurnDeps> = {}): ChatTurnDeps => ({
    port,
    open: async (_query, _mode, names) => opened(names),
    countTokens: (t) => t.split(/\s+/).length,
    contextTokenBudget: 1000,
    maxQuestionChars: 4000,
    historyRounds: 3,
    ...over,
  });
  return { conversations, saved, queries, deps, opened };
}

async function run(events: AsyncIterable<ChatTurnEvent>) {
  const out: ChatTurnEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const request = { question: "When was the lamp lit?", knowledgeBases: ["kb_a"], assistant: "", conversationId: "", settings: { topK: 0, minScore: 0, documentIds: [] } };

function scriptedModel(rewrite: string | Error): ChatModel & { calls: ChatMessage[][] } {
  const calls: ChatMessage[][] = [];
  return {
    name: "scripted",
    calls,
    async *stream(messages) {
      calls.push(messages);
      if (messages[0].content.startsWith("Rewrite")) {
        if (rewrite instanceof Error) throw rewrite;
        yield rewrite;
      } else yield "In 1858 [1].";
    },
  };
}

describe("chatTurn", () => {
  it("starts a conversation, announces it first, and stores the turn with its provenance", async () => {
    const { saved, deps } = world();
    const events = await run(chatTurn(request, deps()));
    expect(events[0]).toMatchObject({ type: "started", conversationId: "cv_1" });
    const final = events.at(-1)!;
    expect(final).toMatchObject({ type: "final", rewrite: QueryRewrite.FIRST_TURN, retrievalQuery: "When was the lamp lit?" });
    expect(saved).toHaveLength(1);
    expect(saved[0].id).toBe((events[0] as { turnId: string }).turnId);
    expect(saved[0].provenance!.lists[0].hits[0].chunkId).toBe("kb_a-1");
    expect(saved[0].provenance!.extractive).toBe(true);
  });

  it("answers a one-off question without making a conversation or keeping its turn", async () => {
    const { saved, conversations, deps } = world();
    const events = await run(chatTurn({ ...request, oneOff: true }, deps()));
    expect(events[0]).toEqual({ type: "started", conversationId: "", turnId: "", traceId: "" });
    expect(events.at(-1)).toMatchObject({ type: "final" });
    expect(events.some((e) => e.type === "text" && e.delta.includes("1858"))).toBe(true);
    expect(saved).toEqual([]);
    expect(conversations.size).toBe(0);
  });

  it("searches a follow-up without a chat model with the previous question's words, and says so", async () => {
    const { saved, queries, deps } = world();
    await run(chatTurn(request, deps()));
    const events = await run(chatTurn({ ...request, knowledgeBases: [], question: "And where?", conversationId: "cv_1" }, deps()));
    expect(events.at(-1)).toMatchObject({ rewrite: QueryRewrite.PREVIOUS_TERMS, retrievalQuery: "lamp lit And where?", evidence: { answered: true } });
    expect(saved[1].provenance!.rewriteNote).toBe("no chat model: searched with the previous question's words (lamp, lit) and the follow-up");
    expect(saved[1].provenance!.answered).toBe(true);
    expect(queries.at(-1)!.text).toBe("lamp lit And where?");
  });

  it("does not answer a follow-up whose own words no passage holds, though the previous subject is found", async () => {
    const { saved, deps } = world();
    await run(chatTurn(request, deps()));
    const events = await run(chatTurn({ ...request, knowledgeBases: [], question: "And who do I call about parking?", conversationId: "cv_1" }, deps()));
    expect(events.at(-1)).toMatchObject({ rewrite: QueryRewrite.PREVIOUS_TERMS, evidence: { answered: false } });
    expect(saved[1].answer).toMatch(/^The selected knowledge bases do not answer this question\.\n\nClosest passages, not an answer: \[1\]$/);
    expect(saved[1].provenance!.answered).toBe(false);
    expect(saved[1].provenance!.answeredReason).toBe("the best document holds 0.00 of the question's weighted content words (0.5 needed); it lacks: call, parking");
    expect(saved[1].citations).toHaveLength(1);
  });

  it("rewrites a follow-up with the chat model and sends the history with the answer request", async () => {
    const { queries, deps } = world();
    const model = scriptedModel("Where was the lamp lit?");
    await run(chatTurn(request, deps({ chatModel: model })));
    const events = await run(chatTurn({ ...request, knowledgeBases: [], question: "And where?", conversationId: "cv_1" }, deps({ chatModel: model })));
    expect(events.at(-1)).toMatchObject({ rewrite: QueryRewrite.REWRITTEN, retrievalQuery: "Where was the lamp lit?" });
    expect(queries.at(-1)!.text).toBe("Where was the lamp lit?");
    const answerCall = model.calls.at(-1)!;
    expect(answerCall.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(answerCall[2].content).toBe("In 1858.");
  });

  it("reads a history the caller holds as a stored conversation's turns: rewritten, sent with the answer request, in a new conversation", async () => {
    const { queries, saved, deps } = world();
    const model = scriptedModel("Where was the lamp lit?");
    const history = [{ question: "When was the lamp lit?", answer: "In 1858 [1]." }];
    const events = await run(chatTurn({ ...request, question: "And where?", history }, deps({ chatModel: model })));
    expect(events[0]).toMatchObject({ type: "started", conversationId: "cv_1" });
    expect(events.at(-1)).toMatchObject({ rewrite: QueryRewrite.REWRITTEN, retrievalQuery: "Where was the lamp lit?" });
    expect(queries.at(-1)!.text).toBe("Where was the lamp lit?");
    expect(model.calls.at(-1)!.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(model.calls.at(-1)![2].content).toBe("In 1858.");
    expect(saved[0].provenance!.historyTurns).toBe(1);
  });

  it("refuses a history beside a conversation id, which holds its own", async () => {
    const { saved, deps } = world();
    await run(chatTurn(request, deps()));
    const both = run(chatTurn({ ...request, knowledgeBases: [], conversationId: "cv_1", history: [{ question: "q", answer: "a" }] }, deps()));
    await expect(both).rejects.toThrow(InvalidInputError);
    await expect(run(chatTurn({ ...request, knowledgeBases: [], conversationId: "cv_1", history: [{ question: "q", answer: "a" }] }, deps()))).rejects.toThrow(/not both/);
    expect(saved).toHaveLength(1);
  });

  it("falls back to the question when the rewrite fails, and records why", async () => {
    const { saved, deps } = world();
    const model = scriptedModel(new UnavailableError("model down"));
    await run(chatTurn(request, deps({ chatModel: scriptedModel("x") })));
    const events = await run(chatTurn({ ...request, knowledgeBases: [], question: "And where?", conversationId: "cv_1" }, deps({ chatModel: model })));
    expect(events.at(-1)).toMatchObject({ rewrite: QueryRewrite.FAILED, retrievalQuery: "And where?" });
    expect(saved[1].provenance!.rewriteNote).toContain("model down");
    expect(saved[1].provenance!.stages[0].stage).toBe("rewrite");
  });

  it("asks an assistant: its bases one by one, its prompt, hidden file names", async () => {
    const { saved, queries, deps } = world();
    const model = scriptedModel("x");
    await run(chatTurn({ ...request, knowledgeBases: [], assistant: "helper" }, deps({ chatModel: model })));
    expect(queries.map((q) => [q.knowledgeBaseIds, q.topK])).toEqual([[["kb_a"], 1]]);
    expect(model.calls[0][0].content.startsWith("Be brief.")).toBe(true);
    expect(model.calls[0][1].content).not.toContain("kb_a-1.txt");
    expect(saved[0].provenance!.assistantId).toBe("as_1");
    expect(saved[0].provenance!.lists[0]).toMatchObject({ knowledgeBaseId: "kb_a", priority: 1, topK: 1 });
  });

  it("refuses what does not fit the conversation, before storing anything", async () => {
    const { saved, deps, conversations } = world();
    await expect(run(chatTurn({ ...request, assistant: "helper" }, deps()))).rejects.toBeInstanceOf(InvalidInputError);
    await expect(run(chatTurn({ ...request, conversationId: "cv_9" }, deps()))).rejects.toBeInstanceOf(NotFoundError);
    await expect(run(chatTurn({ ...request, knowledgeBases: [] }, deps()))).rejects.toBeInstanceOf(InvalidInputError);
    await run(chatTurn(request, deps()));
    await expect(run(chatTurn({ ...request, knowledgeBases: ["kb_b"], conversationId: "cv_1" }, deps()))).rejects.toThrow(/other knowledge bases/);
    await expect(run(chatTurn({ ...request, knowledgeBases: [], assistant: "helper", conversationId: "cv_1" }, deps()))).rejects.toThrow(/not an assistant/);
    expect(conversations.size).toBe(1);
    expect(saved).toHaveLength(1);
  });

  it("keeps a turn that failed, with the error, and rethrows", async () => {
    const { saved, deps, opened } = world();
    const failing = deps({
      open: async (_query, _mode, names) =>
        opened(names, {
          embed: async () => ({ vector: new Float32Array([1, 0]), knownTokenShare: 1 }),
          search: async () => {
            throw new UnavailableError("the engine is down");
          },
        }),
    });
    await expect(run(chatTurn(request, failing))).rejects.toBeInstanceOf(UnavailableError);
    expect(saved).toHaveLength(1);
    expect(saved[0].provenance!.error).toContain("the engine is down");
  });
});
