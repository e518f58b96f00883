import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FailedPreconditionError } from "../errors.ts";
import { WordPieceTokenCounter } from "./wordpiece-token-counter.ts";

const modelDir = path.join(
  process.env.QUARRY_MODELS_DIR ?? path.join(homedir(), ".cache", "quarry", "models"),
  "all-MiniLM-L6-v2-int8",
);

describe("WordPieceTokenCounter", () => {
  const counter = WordPieceTokenCounter.fromModelDir(modelDir);

  it("counts word pieces without [CLS] and [SEP]", () => {
    expect(counter.specialTokenCount()).toBe(2);
    // hello | world | . — each a whole word piece in the uncased BERT vocabulary.
    expect(counter.count("Hello world.")).toBe(3);
    // A rare word becomes several pieces, so this is not a word count.
    expect(counter.count("tokenization")).toBeGreaterThan(1);
    expect(counter.count("")).toBe(0);
    expect(counter.count(" \n\t ")).toBe(0);
  });

  it("counts every Chinese character as its own token", () => {
    const text = "人民检察院通过抗诉";
    expect(counter.count(text)).toBe([...text].length);
  });

  it("names the setup command when the model folder is missing", () => {
    const empty = mkdtempSync(path.join(tmpdir(), "quarry-no-model-"));
    try {
      expect(() => WordPieceTokenCounter.fromModelDir(empty)).toThrow(FailedPreconditionError);
      expect(() => WordPieceTokenCounter.fromModelDir(empty)).toThrow(/npm run setup/);
      expect(() => WordPieceTokenCounter.fromModelDir(path.join(empty, "absent"))).toThrow(/tokenizer\.json/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
