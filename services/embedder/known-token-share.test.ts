import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { describe, expect, it } from "vitest";
import { KnownTokenShare, scriptTest } from "./known-token-share.ts";
import { defaultModelDir } from "./onnx-embedder.ts";

describe("KnownTokenShare with MiniLM's English word pieces", () => {
  const share = KnownTokenShare.fromModelDir(defaultModelDir());

  it("reads all of an English question", () => {
    expect(share.of("How do I reset my password?")).toBe(1);
  });

  it("reads little of a Chinese medical question, whose characters are mostly unknown to it", () => {
    const s = share.of("糖尿病患者可以吃什么水果");
    expect(s).toBeGreaterThanOrEqual(0);
    expect(s).toBeLessThan(0.5);
  });

  it("does not count Han characters the vocabulary knows but the model was never trained on", () => {
    // BERT's vocabulary holds these characters; the manifest says the model reads Latin script only.
    expect(share.of("圣保罗堂区成立于哪年？")).toBe(0);
    const read = (f: string) => JSON.parse(readFileSync(join(defaultModelDir(), f), "utf8"));
    const vocabularyOnly = new KnownTokenShare(new Tokenizer(read("tokenizer.json"), read("tokenizer_config.json")));
    expect(vocabularyOnly.of("圣保罗堂区成立于哪年？")).toBeGreaterThan(0.5);
  });

  it("judges a mixed question by its words: Latin ones count, numbers are neither here nor there", () => {
    // br ##ca ##1 [UNK] [UNK]: two word pieces read, two not, the number piece left out.
    expect(share.of("BRCA1 基因")).toBe(0.5);
    expect(share.of("2006年NBA总冠军")).toBeCloseTo(1 / 5, 5);
    // cMedIR's "视力+0.5": as many number pieces as Chinese ones made it look half readable.
    expect(share.of("视力+0.5")).toBe(0);
    expect(share.of("BRCA1 mutation carriers")).toBe(1);
  });

  it("reads a text of numbers, and nothing in punctuation or an empty text", () => {
    expect(share.of("2006 1.5")).toBe(1);
    expect(share.of("?!…")).toBe(0);
    expect(share.of("")).toBe(0);
    expect(share.of("reset, password!")).toBe(1);
  });
});

describe("scriptTest", () => {
  it("accepts a word piece whose letters are all in the scripts, digits and ## aside", () => {
    const latin = scriptTest(["Latin"]);
    expect(latin("##ing")).toBe(true);
    expect(latin("42")).toBe(true);
    expect(latin("圣")).toBe(false);
    expect(latin("café")).toBe(true);
  });

  it("accepts anything without scripts, and refuses a script name Unicode does not know", () => {
    expect(scriptTest(undefined)("圣")).toBe(true);
    expect(() => scriptTest(["Klingon"])).toThrow(/unknown Unicode script/);
  });
});
