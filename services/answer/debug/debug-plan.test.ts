import { clone, create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { QueryExpansion, TurnSchema, type Turn } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { AssistantSchema, QueryRewriteMode } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { RetrievalMode } from "../../../gen/quarry/common/v1/common_pb.ts";
import { InvalidInputError, NotFoundError } from "../../../lib/errors.ts";
import { planDebug, type DebugRequest } from "./debug-plan.ts";

const ASSISTANT = create(AssistantSchema, {
  id: "as_1",
  name: "keeper",
  knowledgeBases: [
    { knowledgeBase: "kb_manuals", topK: 5, priority: 10 },
    { knowledgeBase: "kb_forum", topK: 0, priority: 1 },
  ],
  retrieval: { mode: RetrievalMode.VECTOR, topK: 6, minScore: 0.2, rerank: true, rewrite: QueryRewriteMode.HYDE },
});

// Stored before query_rewrite replaced query_expansion: the deprecated field's MULTI_QUERY is 3.
const TURN = create(TurnSchema, {
  id: "tn_1",
  question: "And when was it lit?",
  provenance: {
    assistantId: "as_1",
    knowledgeBaseIds: ["kb_manuals", "kb_forum"],
    retrievalQuery: "When was the Skerry Point lens first lit?",
    retrieval: { mode: RetrievalMode.HYBRID, topK: 8, minScore: 0, documentIds: [], metadataEquals: { lang: "en" }, neighbourChunks: 1, queryExpansion: QueryExpansion.MULTI_QUERY },
    // The lists the turn's search returned: each base with the top-k and priority it used then.
    lists: [
      { knowledgeBaseId: "kb_manuals", topK: 4, priority: 10 },
      { knowledgeBaseId: "kb_forum", topK: 8, priority: 1 },
    ],
  },
});

const sources = {
  getTurn: async (id: string): Promise<Turn> => {
    if (id !== "tn_1") throw new NotFoundError(`no turn has the id ${id}`);
    return TURN;
  },
  getAssistant: async () => ASSISTANT,
};

const request = (overrides: Partial<DebugRequest> = {}): DebugRequest => ({
  turnId: "",
  query: "",
  knowledgeBases: [],
  assistant: "",
  overrides: { topK: 0, minScore: 0, documentIds: [] },
  expect: { text: "1858", chunkId: "", documentId: "" },
  deepWindow: 0,
  ...overrides,
});

describe("planDebug", () => {
  it("reruns a turn with its retrieval query, its lists' bases, top-k and priorities, and its whole settings", async () => {
    const plan = await planDebug(request({ turnId: "tn_1" }), sources);
    expect(plan).toMatchObject({
      query: "When was the Skerry Point lens first lit?",
      assistantId: "as_1",
      names: ["kb_manuals", "kb_forum"],
      mounts: [
        { topK: 4, priority: 10 },
        { topK: 8, priority: 1 },
      ],
      mode: "hybrid",
      topK: 8,
      metadataEquals: { lang: "en" },
      extras: { neighbourChunks: 1, queryExpansion: "multi_query", rerank: false },
      deepWindow: 500,
    });
  });

  it("reruns a turn's query_rewrite, whose NONE holds even where the assistant's default expands", async () => {
    const stored = (queryRewrite: QueryRewriteMode) => {
      const turn = clone(TurnSchema, TURN);
      turn.provenance!.rewriteMode = QueryRewriteMode.HYDE;
      Object.assign(turn.provenance!.retrieval!, { queryExpansion: QueryExpansion.UNSPECIFIED, queryRewrite });
      return turn;
    };
    const planOf = async (turn: Turn) => (await planDebug(request({ turnId: "tn_1" }), { ...sources, getTurn: async () => turn })).extras.queryExpansion;
    expect(await planOf(stored(QueryRewriteMode.MULTI_QUERY))).toBe("multi_query");
    expect(await planOf(stored(QueryRewriteMode.NONE))).toBe("none");
    // Neither field set: the assistant's default the turn recorded.
    expect(await planOf(stored(QueryRewriteMode.UNSPECIFIED))).toBe("hyde");
  });

  it("applies the request's overrides over the turn's settings, leaving unset fields alone", async () => {
    const plan = await planDebug(request({ turnId: "tn_1", overrides: { mode: "bm25", topK: 20, minScore: 0, documentIds: [], rerank: true }, deepWindow: 100 }), sources);
    expect(plan).toMatchObject({ mode: "bm25", topK: 20, metadataEquals: { lang: "en" }, extras: { rerank: true, neighbourChunks: 1 }, deepWindow: 100 });
  });

  it("takes an assistant's bases and defaults for an ad-hoc query", async () => {
    const plan = await planDebug(request({ query: " lens ", assistant: "keeper" }), sources);
    expect(plan).toMatchObject({
      query: "lens",
      names: ["kb_manuals", "kb_forum"],
      mounts: [
        { topK: 5, priority: 10 },
        { topK: 0, priority: 1 },
      ],
      mode: "vector",
      topK: 6,
      minScore: 0.2,
      extras: { rerank: true, queryExpansion: "hyde" },
    });
    const plain = await planDebug(request({ query: "lens", knowledgeBases: ["manuals"] }), sources);
    expect(plain).toMatchObject({ names: ["manuals"], mode: "hybrid", topK: 8, extras: {} });
    expect(plain.mounts).toBeUndefined();
  });

  it("refuses what cannot be rerun, with a message a person understands", async () => {
    await expect(planDebug(request(), sources)).rejects.toThrow(new InvalidInputError("name a turn to rerun, or give a query"));
    await expect(planDebug(request({ turnId: "tn_1", query: "x" }), sources)).rejects.toThrow(/not both/);
    await expect(planDebug(request({ query: "x" }), sources)).rejects.toThrow(/choose at least one knowledge base, or an assistant/);
    await expect(planDebug(request({ query: "x", knowledgeBases: ["a"], assistant: "keeper" }), sources)).rejects.toThrow(/not both/);
    await expect(planDebug(request({ turnId: "tn_1", expect: { text: " ", chunkId: "", documentId: "" } }), sources)).rejects.toThrow(/an expected text, a chunk id or a document id/);
    await expect(planDebug(request({ turnId: "tn_1", deepWindow: 5000 }), sources)).rejects.toThrow(/deep_window is at most 1000/);
    await expect(planDebug(request({ turnId: "tn_2" }), sources)).rejects.toBeInstanceOf(NotFoundError);
  });
});
