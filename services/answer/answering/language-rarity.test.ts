import { describe, expect, it } from "vitest";
import { languageRarity } from "./language-rarity.ts";

describe("languageRarity", () => {
  it("weighs a word every Chinese text uses below a term, and a word jieba's table lacks (a name) at its median", () => {
    const common = languageRarity("主要")!;
    const term = languageRarity("习性")!;
    expect(common).toBeLessThan(term);
    expect(term).toBeLessThan(1);
    expect(languageRarity("穴蝰尚恩")).toBe(1);
  });

  it("has no table for other languages: their words are weighed by the retrieved passages alone", () => {
    expect(languageRarity("lighthouse")).toBeUndefined();
    expect(languageRarity("the")).toBeUndefined();
  });
});
