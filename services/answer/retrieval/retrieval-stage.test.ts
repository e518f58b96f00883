import { describe, expect, it } from "vitest";
import type { SearchQuery } from "../../../lib/domain.ts";
import { InvalidInputError, UnavailableError } from "../../../lib/errors.ts";
import { retrieve, type RetrievalSettings } from "./retrieval-stage.ts";
import { makeHit } from "../testing/test-hits.ts";

const settings: RetrievalSettings = { knowledgeBaseIds: ["kb-1"], mode: "hybrid", topK: 5, minScore: 0, documentIds: [] };

function recordingDeps(knownTokenShare = 1) {
  const queries: SearchQuery[] = [];
  const embedded: string[] = [];
  return {
    queries,
    embedded,
    deps: {
      embed: async (q: string) => {
        embedded.push(q);
        return { vector: new Float32Array([1, 0]), knownTokenShare };
      },
      search: async (q: SearchQuery) => {
        queries.push(q);
        return [makeHit("a", "text")];
      },
    },
  };
}

describe("retrieve", () => {
  it("embeds the trimmed question and searches with the settings", async () => {
    const { deps, queries, embedded } = recordingDeps();
    const { hits } = await retrieve("  How do I reset it?  ", deps, { ...settings, rrfK: 30 });
    expect(hits.map((h) => h.chunk.id)).toEqual(["a"]);
    expect(embedded).toEqual(["How do I reset it?"]);
    expect(queries[0]).toMatchObject({ knowledgeBaseIds: ["kb-1"], text: "How do I reset it?", mode: "hybrid", topK: 5, rrfK: 30 });
    expect(Array.from(queries[0].vector!)).toEqual([1, 0]);
  });

  it("does not embed for keyword-only search", async () => {
    const { deps, queries, embedded } = recordingDeps();
    await retrieve("reset", deps, { ...settings, mode: "bm25" });
    expect(embedded).toEqual([]);
    expect(queries[0].vector).toBeUndefined();
  });

  it("fuses at equal weights when the embedder reads the question", async () => {
    const { deps, queries } = recordingDeps(0.9);
    const result = await retrieve("reset my password", deps, settings);
    expect(queries[0].weights).toEqual({ bm25: 1, vector: 1 });
    expect(result).toMatchObject({ knownTokenShare: 0.9, vectorWeight: 1 });
  });

  it("gives the vector list no weight when the embedder cannot read most of the question", async () => {
    const { deps, queries } = recordingDeps(0.2);
    const result = await retrieve("如何重置密码", deps, settings);
    expect(queries[0]).toMatchObject({ mode: "hybrid", weights: { bm25: 1, vector: 0 } });
    expect(result.vectorWeight).toBe(0);
  });

  it("keeps a vector-only search as asked, whatever the embedder reads", async () => {
    const { deps, queries } = recordingDeps(0.2);
    await retrieve("如何重置密码", deps, { ...settings, mode: "vector" });
    expect(queries[0].mode).toBe("vector");
    expect(queries[0].weights).toBeUndefined();
  });

  it("refuses an empty question", async () => {
    await expect(retrieve(" \n ", recordingDeps().deps, settings)).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("refuses a question over the limit and says the limit", async () => {
    const error = await retrieve("x".repeat(8001), recordingDeps().deps, settings).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain("8,000 characters");
    expect((await retrieve("x".repeat(8000), recordingDeps().deps, settings)).hits).toHaveLength(1);
    await expect(retrieve("x".repeat(101), recordingDeps().deps, { ...settings, maxQuestionChars: 100 })).rejects.toThrow(/100 characters/);
  });

  it("refuses a question without knowledge bases", async () => {
    await expect(retrieve("q", recordingDeps().deps, { ...settings, knowledgeBaseIds: [] })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("lets a search failure through instead of returning no hits", async () => {
    const deps = {
      embed: async () => ({ vector: new Float32Array(2), knownTokenShare: 1 }),
      search: async () => Promise.reject(new UnavailableError("index down")),
    };
    await expect(retrieve("q", deps, settings)).rejects.toBeInstanceOf(UnavailableError);
  });
});
