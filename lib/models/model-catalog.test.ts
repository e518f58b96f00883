import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NotFoundError } from "../errors.ts";
import { catalogModel, readInstalledManifest } from "./model-catalog.ts";

describe("the model catalog", () => {
  it("says bge-small-zh reads Han, pools [CLS] and prefixes questions", () => {
    const zh = catalogModel("bge-small-zh-v1.5");
    expect([zh.dimension, zh.pooling, zh.maxTokens, zh.scripts]).toEqual([512, "cls", 512, ["Han"]]);
    expect(zh.queryPrefix).toBe("为这个句子生成表示以用于检索相关文章：");
    expect(zh.passagePrefix).toBe("");
    expect(() => catalogModel("nope")).toThrow(NotFoundError);
  });

  it("fills what an older install's quarry-model.json lacks from the catalog", () => {
    const dir = mkdtempSync(join(tmpdir(), "quarry-manifest-"));
    try {
      writeFileSync(join(dir, "quarry-model.json"), JSON.stringify({ name: "bge-small-en-v1.5", dimension: 384, scripts: ["Latin"] }));
      const m = readInstalledManifest(dir);
      expect([m.pooling, m.queryPrefix, m.maxTokens]).toEqual(["cls", "Represent this sentence for searching relevant passages: ", 512]);
      writeFileSync(join(dir, "quarry-model.json"), JSON.stringify({ name: "my-own-model", dimension: 8 }));
      expect(readInstalledManifest(dir)).toMatchObject({ name: "my-own-model", pooling: "mean", queryPrefix: "", maxTokens: 256 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
