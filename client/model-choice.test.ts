import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chooseModelForFiles, chooseModelForText, CHINESE_MODEL, hanShare } from "./model-choice.ts";

describe("choosing a new knowledge base's model from its first files", () => {
  it("counts Han characters against Latin words", () => {
    expect(hanShare("大熊猫 eats bamboo")).toBeCloseTo(3 / 5);
    expect(hanShare("1234 — !!")).toBeUndefined();
  });

  it("gives mostly-Chinese text the Chinese model and English or mixed-English text the default", () => {
    expect(chooseModelForText("大熊猫是中国特有的珍稀哺乳动物，日常几乎只吃竹笋 (giant panda)。").model).toBe(CHINESE_MODEL);
    expect(chooseModelForText("The first typewriter was patented in 1868 by Sholes; 打字机.").model).toBe("");
    expect(chooseModelForText("").model).toBe("");
  });

  it("samples the text files only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "quarry-choice-"));
    try {
      writeFileSync(join(dir, "a.md"), "# 长城\n\n长城是古代王朝修筑的军事防御工程。");
      writeFileSync(join(dir, "b.pdf"), "%PDF-1.4 binary English words words words words words words words words");
      expect(await chooseModelForFiles([join(dir, "a.md"), join(dir, "b.pdf")])).toMatchObject({ model: CHINESE_MODEL, hanShare: 1 });
      expect(await chooseModelForFiles([join(dir, "b.pdf")])).toEqual({ model: "", hanShare: undefined });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
