import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FailedPreconditionError } from "../../lib/errors.ts";
import { defaultModelDir, OnnxEmbedder } from "./onnx-embedder.ts";

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i], 0);

describe("OnnxEmbedder.load", () => {
  it("refuses a missing model folder and names the command that installs it", async () => {
    const empty = mkdtempSync(join(tmpdir(), "quarry-no-model-"));
    try {
      const error = await OnnxEmbedder.load(join(empty, "all-MiniLM-L6-v2-int8")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FailedPreconditionError);
      expect((error as Error).message).toMatch(/missing/);
      expect((error as Error).message).toContain("npm run setup");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("finds the models folder from QUARRY_MODELS_DIR", () => {
    expect(defaultModelDir("m", { QUARRY_MODELS_DIR: "/srv/models" })).toBe("/srv/models/m");
  });
});

// The real model, installed by `npm run setup` (which `npm test` runs first).
describe("OnnxEmbedder with all-MiniLM-L6-v2", () => {
  let embedder: OnnxEmbedder;
  beforeAll(async () => {
    embedder = await OnnxEmbedder.load(defaultModelDir());
  });
  afterAll(() => embedder?.close());

  it("reports the model from quarry-model.json", () => {
    expect(embedder.info()).toEqual({ model: "all-MiniLM-L6-v2-int8", dimension: 384, maxInputTokens: 256 });
  });

  it("returns unit vectors of the model's dimension", async () => {
    const [v] = await embedder.embed(["The quick brown fox"], "document");
    expect(v).toHaveLength(384);
    expect(cosine(v, v)).toBeCloseTo(1, 5);
  });

  it("places paraphrases closer than unrelated text", async () => {
    const [question, paraphrase, unrelated] = await embedder.embed(
      ["How do I reset my password?", "Steps to change your account password", "The weather in Paris is sunny"],
      "query",
    );
    const related = cosine(question, paraphrase);
    const other = cosine(question, unrelated);
    expect(related).toBeGreaterThan(0.5);
    expect(related - other).toBeGreaterThan(0.3);
  });

  it("gives each text the same vector alone as in a padded, reordered batch", async () => {
    const texts = [
      "short",
      "A considerably longer sentence that forces the others in its batch to be padded with many tokens.",
      "medium length text here",
      "",
    ];
    const batched = await embedder.embed(texts, "document");
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text], "document");
      expect(cosine(alone, batched[i])).toBeGreaterThan(0.9999);
    }
  });

  it("truncates to 256 word pieces including [CLS] and [SEP]", async () => {
    const long = Array.from({ length: 400 }, (_, i) => `word${i % 50}`).join(" ");
    expect(embedder.tokenize(long)).toHaveLength(256);
    expect(embedder.tokenize("hello world")).toHaveLength(4);
    // Whatever follows the limit cannot change the vector.
    const [a, b] = await embedder.embed([long, `${long} and an entirely different ending about volcanoes`], "document");
    expect(cosine(a, b)).toBeGreaterThan(0.99999);
  });

  it("embeds ~200-token passages at a usable rate", async () => {
    const words = "the index stores chunks of each document together with vectors so that questions find passages".split(" ");
    const passages = Array.from({ length: 64 }, (_, p) =>
      Array.from({ length: 170 }, (_, w) => words[(w * 7 + p) % words.length]).join(" "),
    );
    const tokens = passages.map((p) => embedder.tokenize(p).length);
    expect(Math.min(...tokens)).toBeGreaterThan(150);
    const started = performance.now();
    const vectors = await embedder.embed(passages, "document");
    const seconds = (performance.now() - started) / 1000;
    const rate = passages.length / seconds;
    console.log(`OnnxEmbedder throughput: ${rate.toFixed(1)} chunks/s on ${Math.round(tokens.reduce((a, b) => a + b) / tokens.length)}-token passages`);
    expect(vectors).toHaveLength(passages.length);
    expect(rate).toBeGreaterThan(2);
  });
});
