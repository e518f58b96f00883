import { describe, expect, it } from "vitest";
import type { SearchHit } from "../../../lib/domain.ts";
import { correctionDocumentText } from "../../../lib/correction-document.ts";
import { CORRECTION_TERM_OVERLAP, DEFAULT_CORRECTION_SIMILARITY, matchCorrections, normaliseQuestion, similarityThreshold, termOverlap } from "./correction-match.ts";
import { makeHit } from "../testing/test-hits.ts";

const correction = (id: string, questions: string[]): SearchHit => makeHit(id, correctionDocumentText(questions, "Every 14 days."), { score: 0.5 });

/** An embedder that maps each known text to a fixed unit vector, as a model would place them. */
const embedderOf = (vectors: Record<string, number[]>, model = "all-MiniLM-L6-v2-int8", share = 1) => ({
  model,
  embed: async (text: string) => {
    if (!vectors[text]) throw new Error(`no vector for ${text}`);
    return { vector: Float32Array.from(vectors[text]), knownTokenShare: share };
  },
});

describe("matchCorrections", () => {
  const asked = "How often is the lamp serviced?";

  it("passes the same question however it is cased, spaced and punctuated, without embedding it", async () => {
    const matches = await matchCorrections(asked, [correction("c", ["how often is the LAMP  serviced"])], undefined);
    expect(matches.get("c")).toEqual({ question: "how often is the LAMP serviced", method: "same-question", similarity: 1, threshold: 1, relevant: true });
    expect(normaliseQuestion("Ｈｏｗ often?")).toBe(normaliseQuestion("how OFTEN"));
  });

  it("passes a paraphrase at or above its model's threshold and refuses one below it", async () => {
    const cos = (c: number) => [c, Math.sqrt(1 - c * c)];
    const embedder = embedderOf({ [asked]: [1, 0], "How frequently is the lamp maintained?": cos(0.86), "Who maintains the lamp?": cos(0.84) });
    const matches = await matchCorrections(asked, [correction("close", ["How frequently is the lamp maintained?"]), correction("other", ["Who maintains the lamp?"])], embedder);
    expect(matches.get("close")).toMatchObject({ method: "embedding", threshold: 0.85, relevant: true });
    expect(matches.get("close")!.similarity).toBeCloseTo(0.86, 5);
    expect(matches.get("other")).toMatchObject({ method: "embedding", relevant: false });
  });

  it("takes the best of a correction's wordings", async () => {
    const embedder = embedderOf({ [asked]: [1, 0], "Who paints the tower?": [0, 1], "How frequently is the lamp serviced?": [1, 0] });
    const matches = await matchCorrections(asked, [correction("c", ["Who paints the tower?", "How frequently is the lamp serviced?"])], embedder);
    expect(matches.get("c")).toMatchObject({ question: "How frequently is the lamp serviced?", relevant: true });
  });

  it("compares words when the model cannot read the questions, or the embedder is down: only the same words pass", async () => {
    const unread = embedderOf({ "灯塔的灯多久保养一次？": [1, 0], "灯塔的灯保养多久一次？": [1, 0], "灯塔的灯由谁保养？": [1, 0] }, "all-MiniLM-L6-v2-int8", 0.1);
    const matches = await matchCorrections("灯塔的灯多久保养一次？", [correction("reordered", ["灯塔的灯保养多久一次？"]), correction("other", ["灯塔的灯由谁保养？"])], unread);
    expect(matches.get("reordered")).toMatchObject({ method: "terms", threshold: CORRECTION_TERM_OVERLAP, relevant: true });
    expect(matches.get("other")).toMatchObject({ method: "terms", relevant: false });
    const down = { model: "m", embed: async () => Promise.reject(new Error("embedder unavailable")) };
    expect((await matchCorrections(asked, [correction("c", ["Who paints the tower?"])], down)).get("c")).toMatchObject({ method: "terms", relevant: false });
  });

  it("cannot match a chunk that does not start with the question (a long answer's later chunk)", async () => {
    const matches = await matchCorrections(asked, [makeHit("tail", "…and the rest of a long corrected answer.", { score: 1 })], undefined);
    expect(matches.get("tail")).toMatchObject({ method: "no-question", relevant: false });
  });

  it("states a threshold for the measured models and a stricter default for the rest", () => {
    expect(similarityThreshold("all-MiniLM-L6-v2-int8")).toBe(0.85);
    expect(similarityThreshold("bge-small-zh-v1.5")).toBe(0.9);
    expect(similarityThreshold("text-embedding-3-small")).toBe(DEFAULT_CORRECTION_SIMILARITY);
    expect(termOverlap("How often is the lamp serviced?", "how often is the lamp serviced")).toBe(1);
    expect(termOverlap("How often is the lamp serviced?", "Who paints the tower?")).toBe(0);
  });
});
