// The retrieval's one retry: a base that switched its embedding model between the look-up and the
// search is looked up again and searched with the new model's vector — decided by the failure's
// reason, so a failure that only reads the same is not retried.
import { describe, expect, it } from "vitest";
import type { KnowledgeBase, SearchQuery } from "../../lib/domain.ts";
import { ErrorReasons, FailedPreconditionError } from "../../lib/errors.ts";
import { AnswerApplication, type Retriever } from "./answer-service.ts";
import { makeHit } from "./testing/test-hits.ts";

const STALE = "query vector has 3 dimensions; knowledge base kb-1 stores 4";

function base(model: string, dimension: number): KnowledgeBase {
  const now = new Date();
  return {
    id: "kb-1",
    name: "manuals",
    description: "",
    embeddingModel: model,
    embeddingDimension: dimension,
    chunking: {} as KnowledgeBase["chunking"],
    documentCount: 1,
    chunkCount: 1,
    tokenCount: 10,
    createdAt: now,
    updatedAt: now,
  };
}

/** A retriever whose base switches from a 3- to a 4-dimension model after the first look-up; its first search fails with `failure`. */
function switchingRetriever(failure: Error) {
  const opened: string[] = [];
  const searched: number[] = [];
  const retriever: Retriever = {
    embedForSupport: async () => [],
    async open() {
      const kb = opened.length === 0 ? base("old-model", 3) : base("new-model", 4);
      opened.push(kb.embeddingModel);
      return {
        knowledgeBases: [kb],
        deps: {
          embed: async () => ({ vector: new Float32Array(kb.embeddingDimension), knownTokenShare: 1 }),
          async search(query: SearchQuery) {
            searched.push(query.vector?.length ?? 0);
            if (searched.length === 1) throw failure;
            return [makeHit("c1", "the pump is primed before the first start")];
          },
          chunksAt: async () => [],
        },
      };
    },
  };
  return { retriever, opened, searched };
}

function application(retriever: Retriever) {
  return new AnswerApplication({
    retriever,
    countTokens: (text) => text.split(/\s+/).length,
    contextTokenBudget: 1_000,
    maxQuestionChars: 1_000,
    conversations: {} as never,
  });
}

const question = { text: "how is the pump primed", knowledgeBases: ["manuals"], options: { mode: "hybrid" as const, topK: 5, minScore: 0, documentIds: [], metadataEquals: {} } };

describe("AnswerApplication.retrieve", () => {
  it("looks the base up again and searches with the new model when the search says the vector is stale", async () => {
    const { retriever, opened, searched } = switchingRetriever(new FailedPreconditionError(STALE, { reason: ErrorReasons.staleQueryVector }));
    const { hits } = await application(retriever).retrieve(question);
    expect(hits.map((h) => h.chunk.id)).toEqual(["c1"]);
    expect(opened).toEqual(["old-model", "new-model"]);
    expect(searched).toEqual([3, 4]);
  });

  it("does not retry a failure that only reads the same", async () => {
    const { retriever, opened } = switchingRetriever(new FailedPreconditionError(STALE));
    await expect(application(retriever).retrieve(question)).rejects.toThrow(STALE);
    expect(opened).toEqual(["old-model"]);
  });
});
