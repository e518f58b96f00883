import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CHINESE_NOTES_MARKDOWN, CHINESE_RULES_FACT, CHINESE_RULES_MARKDOWN, COMPANY_MARKDOWN } from "../../../test/fixtures/fixture-texts.ts";
import { describeWithShared } from "../../../test/support/shared-material.ts";
import { parseMarkdown } from "./markdown-parser.ts";

describe("parseMarkdown", () => {
  it("keeps the text exactly and makes sections from ATX headings", () => {
    const source = COMPANY_MARKDOWN;
    const { text, sections } = parseMarkdown(source);
    expect(text).toBe(source);
    expect(sections.map((s) => s.path)).toEqual([["Tallis Instruments"], ["Tallis Instruments", "1890s–1930s"], ["Tallis Instruments", "1940s–1970s"]]);
    const history = sections[1];
    expect(text.slice(history.start).startsWith("## 1890s–1930s")).toBe(true);
    // Sections do not overlap: one ends where the next heading begins (minus blank lines).
    expect(text.slice(history.end, sections[2].start).trim()).toBe("");
  });

  it("nests Chinese chapter and section headings", () => {
    const source = CHINESE_RULES_MARKDOWN;
    const { sections } = parseMarkdown(source);
    expect(sections).toHaveLength(CHINESE_RULES_FACT.sectionCount);
    const article = source.indexOf(CHINESE_RULES_FACT.article);
    const containing = sections.find((s) => article >= s.start && article < s.end);
    expect(containing?.path).toEqual(CHINESE_RULES_FACT.path);
    expect(containing?.level).toBe(3);
    expect(sections.at(-1)?.path).toEqual(CHINESE_RULES_FACT.lastPath);
  });

  it("treats a bullet-list document as one section under its title", () => {
    const source = CHINESE_NOTES_MARKDOWN;
    expect(parseMarkdown(source).sections).toEqual([{ path: ["家庭养蜂要点"], level: 1, start: 0, end: source.trimEnd().length }]);
  });

  it("reads setext headings and ignores headings inside fenced code and front matter", () => {
    const source = [
      "---",
      "title: not a heading",
      "---",
      "Guide",
      "=====",
      "",
      "```bash",
      "# a shell comment, not a heading",
      "```",
      "",
      "Install **now**",
      "---------------",
      "~~~",
      "## still code",
      "~~~",
      "### [Linked](http://x) step ###",
      "",
      "text",
      "",
      "---",
      "",
      "after a rule",
    ].join("\n");
    const { sections } = parseMarkdown(source);
    expect(sections.map((s) => [s.level, s.path])).toEqual([
      [1, ["Guide"]],
      [2, ["Guide", "Install now"]],
      [3, ["Guide", "Install now", "Linked step"]],
    ]);
    expect(source.slice(sections[0].start).startsWith("Guide\n=====")).toBe(true);
    expect(sections[2].end).toBe(source.length);
  });
});

describeWithShared("corpus/docs", "parseMarkdown on real-world Markdown", (docs) => {
  const readText = (name: string) => readFileSync(path.join(docs, name), "utf8");

  it("makes sections from a Wikipedia article's headings", () => {
    expect(parseMarkdown(readText("wiki.md")).sections.map((s) => s.path)).toEqual([["IBM"], ["IBM", "1910s–1950s"], ["IBM", "1960s–1980s"]]);
  });

  it("nests the chapters and sections of Chinese rules", () => {
    const source = readText("zh_procuratorate_admin_litigation_rules_2016.md");
    const { sections } = parseMarkdown(source);
    expect(sections).toHaveLength(10);
    const article = source.indexOf("第十四条");
    const containing = sections.find((s) => article >= s.start && article < s.end);
    expect(containing?.path).toEqual(["人民检察院行政诉讼监督规则（试行）", "第四章 对生效判决、裁定、调解书的监督", "第一节 一般规定"]);
  });
});
