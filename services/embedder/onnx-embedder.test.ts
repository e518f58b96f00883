import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FailedPreconditionError } from "../../lib/errors.ts";
import { defaultModelDir, OnnxEmbedder, weightedMean } from "./onnx-embedder.ts";

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

  it("reads a question longer than its input whole: the mean of equal windows, weighted by their word pieces", async () => {
    // Words of one word piece each, so the windows can be cut by hand: 600 pieces are three of 200.
    const cooking = "bread butter salt sugar milk flour cake oven kitchen dinner".split(" ");
    const volcano = "volcano lava ash eruption mountain island fire rock smoke heat".split(" ");
    for (const word of [...cooking, ...volcano]) expect(embedder.tokenize(word)).toHaveLength(3);
    const words = [...Array.from({ length: 400 }, (_, i) => cooking[i % 10]), ...Array.from({ length: 200 }, (_, i) => volcano[i % 10])];
    const long = words.join(" ");
    expect(embedder.tokenize(long)).toHaveLength(256);
    const [whole] = await embedder.embed([long], "query");
    const [cut] = await embedder.embed([long], "document");
    const [aboutVolcanoes] = await embedder.embed([volcano.join(" ")], "document");
    // The document is cut at the limit and never sees the volcanoes; the question reads them.
    expect(cosine(whole, aboutVolcanoes)).toBeGreaterThan(cosine(cut, aboutVolcanoes) + 0.05);
    const windows = [0, 200, 400].map((start) => words.slice(start, start + 200).join(" "));
    const expected = weightedMean(await embedder.embed(windows, "document"), [200, 200, 200], true);
    expect(cosine(whole, expected)).toBeGreaterThan(0.9999);
    // A question that fits is embedded as it is, as before.
    const [shortQuery, shortDocument] = [...(await embedder.embed(["volcano island"], "query")), ...(await embedder.embed(["volcano island"], "document"))];
    expect(cosine(shortQuery, shortDocument)).toBeGreaterThan(0.99999);
  });

  it("cuts long questions too when told to read nothing whole", async () => {
    const cutting = await OnnxEmbedder.load(defaultModelDir(), { readWhole: [] });
    try {
      const long = Array.from({ length: 400 }, (_, i) => `word${i % 50}`).join(" ");
      const [a, b] = await cutting.embed([long, `${long} and an entirely different ending about volcanoes`], "query");
      expect(cosine(a, b)).toBeGreaterThan(0.99999);
    } finally {
      await cutting.close();
    }
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
