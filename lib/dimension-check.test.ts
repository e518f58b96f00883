import { describe, expect, it } from "vitest";
import { FailedPreconditionError } from "./errors.ts";
import { assertDimension } from "./dimension-check.ts";

describe("assertDimension", () => {
  const context = { knowledgeBase: "handbook", expectedModel: "all-MiniLM-L6-v2-int8", actualModel: "nomic-embed-text" };

  it("accepts vectors of the expected length", () => {
    expect(() => assertDimension([new Float32Array(384), new Float32Array(384)], 384, context)).not.toThrow();
  });

  it("names both models and both dimensions on a mismatch", () => {
    const check = () => assertDimension([new Float32Array(384), new Float32Array(768)], 384, context);
    expect(check).toThrow(FailedPreconditionError);
    expect(check).toThrow(/handbook expects 384-dim vectors from model all-MiniLM-L6-v2-int8; the embedder produced 768 from nomic-embed-text/);
  });
});
