import { describe, expect, it } from "vitest";
import { KnownTokenShare } from "./known-token-share.ts";
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

  it("leaves punctuation out and reads nothing in an empty text", () => {
    expect(share.of("?!…")).toBe(0);
    expect(share.of("reset, password!")).toBe(1);
  });
});
