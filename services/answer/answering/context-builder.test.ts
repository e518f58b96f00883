import { describe, expect, it } from "vitest";
import { buildContext, renderContext } from "./context-builder.ts";
import { makeHit } from "../testing/test-hits.ts";

// Whitespace-separated words stand in for the model's tokens.
const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

describe("buildContext", () => {
  it("numbers chunks 1..n in rank order and renders their sources", () => {
    const hits = [
      makeHit("a", "Passwords are reset from the Settings page.", { fileName: "guide.pdf", page: 3, sectionPath: ["Account", "Passwords"] }),
      makeHit("b", "Sessions expire after an hour.", { fileName: "faq.md" }),
    ];
    const built = buildContext(hits, { tokenBudget: 1000, countTokens: countWords });
    expect(built.chunks.map((c) => [c.number, c.hit.chunk.id])).toEqual([[1, "a"], [2, "b"]]);
    expect(renderContext(built.chunks)).toBe(
      "[1] (guide.pdf, p. 3, Account > Passwords)\nPasswords are reset from the Settings page.\n\n[2] (faq.md)\nSessions expire after an hour.",
    );
  });

  it("drops repeats of a chunk id and of the same text, keeping numbering dense", () => {
    const hits = [
      makeHit("a", "Alpha text."),
      makeHit("a", "Alpha text."),
      makeHit("b", "  ALPHA\n text. "),
      makeHit("c", "Gamma text."),
    ];
    const built = buildContext(hits, { tokenBudget: 1000, countTokens: countWords });
    expect(built.chunks.map((c) => [c.number, c.hit.chunk.id])).toEqual([[1, "a"], [2, "c"]]);
    expect(built.excluded.map((e) => [e.hit.chunk.id, e.reason, e.duplicateOf])).toEqual([["a", "duplicate", 1], ["b", "duplicate", 1]]);
  });

  it("stays within the token budget, letting a smaller later chunk fill the rest", () => {
    const long = "word ".repeat(50).trim();
    const hits = [makeHit("a", "one two three"), makeHit("b", long), makeHit("c", "four five")];
    // Room for the first and third entries exactly, not for the long second one.
    const budget = countWords("[1] (a.txt)\none two three") + countWords("[2] (c.txt)\nfour five");
    const built = buildContext(hits, { tokenBudget: budget, countTokens: countWords });
    expect(built.chunks.map((c) => c.hit.chunk.id)).toEqual(["a", "c"]);
    expect(built.chunks.map((c) => c.number)).toEqual([1, 2]);
    expect(built.tokens).toBeLessThanOrEqual(budget);
    expect(built.excluded).toEqual([{ hit: hits[1], reason: "over-budget" }]);
  });

  it("admits nothing when even the best chunk exceeds the budget", () => {
    const built = buildContext([makeHit("a", "a b c d e f")], { tokenBudget: 3, countTokens: countWords });
    expect(built.chunks).toEqual([]);
    expect(built.tokens).toBe(0);
  });
});
