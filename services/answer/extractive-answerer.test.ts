import { describe, expect, it } from "vitest";
import { extractiveAnswer, splitSentences } from "./extractive-answerer.ts";
import { makeContext } from "./test-hits.ts";

describe("splitSentences", () => {
  it("splits on Chinese full stops and on line breaks", () => {
    expect(splitSentences("第一句。第二句！第三句？\n标题\n最后", "zh").map((s) => s.text)).toEqual(["第一句。", "第二句！", "第三句？", "标题", "最后"]);
  });

  it("joins English lines wrapped inside a paragraph, but not list items", () => {
    const text = "Citations are mapped,\nnot trusted. Markers\nare checked.\n- a list item\n- another";
    expect(splitSentences(text, "en").map((s) => s.text)).toEqual([
      "Citations are mapped, not trusted.",
      "Markers are checked.",
      "- a list item",
      "- another",
    ]);
  });

  it("keeps offsets into the original text", () => {
    const text = "One. Two.\nThree.";
    for (const s of splitSentences(text, "en")) expect(text.slice(s.start, s.start + s.text.length)).toBe(s.text);
  });
});

describe("extractiveAnswer", () => {
  const english = makeContext([
    "Our office opens at nine. To reset your password, open Settings and choose Security. The reset link expires after one hour.",
    "Invoices are sent monthly. A password reset also signs you out of every device.",
    "The cafeteria serves lunch from noon.",
  ]);

  it("picks the sentences that match the question, each with its marker, in document order", () => {
    const { text, found } = extractiveAnswer("How do I reset my password?", english);
    expect(found).toBe(true);
    expect(text.startsWith("Extractive answer (no language model configured)")).toBe(true);
    expect(text).toContain("To reset your password, open Settings and choose Security. [1]");
    expect(text).toContain("The reset link expires after one hour. [1]");
    expect(text).toContain("A password reset also signs you out of every device. [2]");
    expect(text).not.toContain("office opens");
    expect(text).not.toContain("cafeteria");
    expect(text.indexOf("To reset your password")).toBeLessThan(text.indexOf("The reset link expires"));
    expect(text.indexOf("[1]")).toBeLessThan(text.indexOf("[2]"));
  });

  it("caps the number of sentences, keeping the best", () => {
    const { text } = extractiveAnswer("How do I reset my password?", english, { maxSentences: 1 });
    expect(text.match(/\[\d\]/g)).toEqual(["[1]"]);
    expect(text).toContain("To reset your password");
  });

  it("answers from Chinese passages with word segmentation", () => {
    const chinese = makeContext([
      "公司地址在北京。如需重置密码，请打开设置页面并选择安全选项。重置链接一小时后失效。",
      "发票每月寄出一次。",
    ]);
    const { text, found } = extractiveAnswer("如何重置我的密码？", chinese);
    expect(found).toBe(true);
    expect(text.startsWith("摘录式回答")).toBe(true);
    expect(text).toContain("如需重置密码，请打开设置页面并选择安全选项。[1]");
    expect(text).toContain("重置链接一小时后失效。[1]");
    expect(text).not.toContain("公司地址");
    expect(text).not.toContain("发票");
  });

  it("says so when nothing matches", () => {
    const result = extractiveAnswer("What is the parking policy?", english);
    expect(result.found).toBe(false);
    expect(result.text).toMatch(/no passage .* matches the question/);
    expect(result.text).not.toMatch(/\[\d\]/);
    expect(extractiveAnswer("停车政策是什么？", []).found).toBe(false);
  });
});
