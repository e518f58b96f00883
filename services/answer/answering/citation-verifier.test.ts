import { describe, expect, it } from "vitest";
import { EMBEDDING_SUPPORT_THRESHOLD, lexicalSupport, verifyCitations, type SupportEmbedder } from "./citation-verifier.ts";

const chunks: Record<number, string> = {
  1: "To reset your password, open Settings and choose Security. The reset link expires after one hour.",
  2: "Two-factor codes expire after 30 seconds.",
};
const chunkText = (n: number) => chunks[n];

describe("lexicalSupport", () => {
  it("is the share of the sentence's content words in the chunk, 1 for a verbatim quote", () => {
    expect(lexicalSupport("Open Settings and choose Security", chunks[1])).toBe(1);
    expect(lexicalSupport("The reset link expires after one hour.", chunks[1])).toBe(1);
    // passwords→password, never, rotate: only "password" is in chunk 1.
    expect(lexicalSupport("Passwords never rotate", chunks[1])).toBeCloseTo(1 / 3, 10);
    expect(lexicalSupport("如需重置密码，请打开设置页面", "如需重置密码，请打开设置页面并选择安全选项。")).toBe(1);
  });
});

describe("verifyCitations", () => {
  it("checks each marker against the sentence it stands after", async () => {
    const answer = "Open Settings and choose Security [1]. Passwords never rotate [2]. Codes expire after 30 seconds [2][1].";
    const checks = await verifyCitations(answer, chunkText);
    expect(checks.map((c) => [c.marker, answer.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      [1, "Open Settings and choose Security", true],
      [2, "Passwords never rotate", false],
      [2, "Codes expire after 30 seconds", true],
      [1, "Codes expire after 30 seconds", false],
    ]);
    expect(checks.every((c) => c.embeddingSupport === undefined)).toBe(true);
  });

  it("finds the sentence before a marker in Chinese and after a notice line", async () => {
    const answer = "摘录式回答（未配置语言模型），摘自来源：\n\n如需重置密码，请打开设置页面。[1]发票每月寄出。[1]";
    const checks = await verifyCitations(answer, () => "如需重置密码，请打开设置页面并选择安全选项。");
    expect(checks.map((c) => [answer.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      ["如需重置密码，请打开设置页面。", true],
      ["发票每月寄出。", false],
    ]);
  });

  it("checks a marker that opens an English sentence against the rest of that sentence", async () => {
    const answer = "According to [2], two-factor codes expire after 30 seconds. As shown in [1], the reset link expires after one hour.";
    const checks = await verifyCitations(answer, chunkText);
    expect(checks.map((c) => [c.marker, answer.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      [2, "two-factor codes expire after 30 seconds.", true],
      [1, "the reset link expires after one hour.", true],
    ]);
    // The rest of the sentence must still be what the chunk says: the wrong chunk, or the wrong number, fails.
    const wrong = await verifyCitations("According to [1], two-factor codes expire after 30 seconds. Per [2], codes expire after 90 seconds.", chunkText);
    expect(wrong.map((c) => c.supported)).toEqual([false, false]);
  });

  it("checks a marker that opens a Chinese sentence against the rest of that sentence", async () => {
    const chunk = "于乐，中国足球运动员，2014年以自由转会方式加盟深圳红钻。";
    const answer = "根据[1]，于乐以自由转会方式加盟深圳红钻。据[1]记载，他是一名篮球教练。";
    const checks = await verifyCitations(answer, () => chunk);
    expect(checks.map((c) => [answer.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      ["于乐以自由转会方式加盟深圳红钻。", true],
      ["记载，他是一名篮球教练。", false],
    ]);
  });

  it("keeps both positions apart in one answer, in English and in Chinese, and a marker on the next line opens its sentence", async () => {
    const en = "The reset link expires after one hour [1]. According to [2], codes expire after 30 seconds.\n[1] Open Settings and choose Security.";
    expect((await verifyCitations(en, chunkText)).map((c) => [c.marker, en.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      [1, "The reset link expires after one hour", true],
      [2, "codes expire after 30 seconds.", true],
      [1, "Open Settings and choose Security.", true],
    ]);
    const zhChunks: Record<number, string> = { 1: "如需重置密码，请打开设置页面并选择安全选项。", 2: "发票每月一日寄出。" };
    const zh = "如需重置密码，请打开设置页面。[1]根据[2]，发票每月一日寄出。";
    expect((await verifyCitations(zh, (n) => zhChunks[n])).map((c) => [c.marker, zh.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      [1, "如需重置密码，请打开设置页面。", true],
      [2, "发票每月一日寄出。", true],
    ]);
  });

  it("gives each marker of a sentence its clause, and a marker that follows another with nothing between the same claim", async () => {
    const answer = "Open Settings [1], and codes expire after 30 seconds [2], [1].";
    expect((await verifyCitations(answer, chunkText)).map((c) => [c.marker, answer.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      [1, "Open Settings", true],
      [2, "and codes expire after 30 seconds", true],
      [1, "and codes expire after 30 seconds", false],
    ]);
    const zh = "如需重置密码，请打开设置页面[1]，发票每月一日寄出[2]。根据[1][2]，发票每月一日寄出。";
    const zhChunks: Record<number, string> = { 1: "如需重置密码，请打开设置页面并选择安全选项。", 2: "发票每月一日寄出。" };
    expect((await verifyCitations(zh, (n) => zhChunks[n])).map((c) => [c.marker, zh.slice(c.sentenceStart, c.sentenceEnd), c.supported])).toEqual([
      [1, "如需重置密码，请打开设置页面", true],
      [2, "发票每月一日寄出", true],
      [1, "发票每月一日寄出。", false],
      [2, "发票每月一日寄出。", true],
    ]);
  });

  it("checks a sentence-opening marker's claim without the later markers in it", async () => {
    const answer = "According to [1], open Settings and choose Security [1].";
    const checks = await verifyCitations(answer, chunkText);
    expect(checks.map((c) => [answer.slice(c.sentenceStart, c.sentenceEnd), c.lexicalSupport, c.supported])).toEqual([
      ["open Settings and choose Security [1].", 1, true],
      ["open Settings and choose Security", 1, true],
    ]);
  });

  it("holds a sentence whose number is not in the chunk unsupported, whatever its words", async () => {
    const [check] = await verifyCitations("Two-factor codes expire after 90 seconds [2].", chunkText);
    expect(check.lexicalSupport).toBeGreaterThanOrEqual(0.5);
    expect(check.supported).toBe(false);
  });

  it("accepts a paraphrase by embedding similarity, only when the embedder reads the sentence", async () => {
    const paraphrase = "Security settings let you choose a new login secret";
    const vectors: Record<string, number[]> = {
      [paraphrase]: [1, 0],
      "To reset your password, open Settings and choose Security.": [0.9, Math.sqrt(1 - 0.81)],
      "The reset link expires after one hour.": [0, 1],
    };
    const embedded: string[][] = [];
    const embed = (share: number): SupportEmbedder => async (texts) => {
      embedded.push(texts);
      return texts.map((t) => ({ vector: Float32Array.from(vectors[t] ?? [0, 1]), knownTokenShare: t === paraphrase ? share : 1 }));
    };
    const answer = `${paraphrase} [1].`;
    expect(lexicalSupport(paraphrase, chunks[1])).toBeLessThan(0.5);
    const [read] = await verifyCitations(answer, chunkText, embed(1));
    expect(read.embeddingSupport).toBeCloseTo(0.9, 5);
    expect(read.embeddingSupport!).toBeGreaterThanOrEqual(EMBEDDING_SUPPORT_THRESHOLD);
    expect(read.supported).toBe(true);
    const [unread] = await verifyCitations(answer, chunkText, embed(0.2));
    expect(unread.embeddingSupport).toBeUndefined();
    expect(unread.supported).toBe(false);
    // Lexically supported sentences are never sent to the embedder.
    embedded.length = 0;
    await verifyCitations("Open Settings and choose Security [1].", chunkText, embed(1));
    expect(embedded).toEqual([]);
  });

  it("stays lexical when the embedder fails", async () => {
    const failures: unknown[] = [];
    const checks = await verifyCitations("Passwords never rotate [2].", chunkText, async () => Promise.reject(new Error("embedder down")), (e) => failures.push(e));
    expect(checks[0].supported).toBe(false);
    expect(failures).toHaveLength(1);
  });
});
