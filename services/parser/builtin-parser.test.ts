import { readFileSync } from "node:fs";
import path from "node:path";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import { fixtureBytes, ole2Header, zipArchive, type FixtureName } from "../../test/fixtures/fixture-documents.ts";
import { CHINESE_RULES_FACT } from "../../test/fixtures/fixture-texts.ts";
import { describeWithShared } from "../../test/support/shared-material.ts";
import { BuiltinParser } from "./builtin-parser.ts";

const parser = new BuiltinParser();
const parseBytes = (bytes: Uint8Array, fileName: string, declaredMimeType = "application/octet-stream") =>
  parser.parse({ bytes, fileName, declaredMimeType });
const parseFixture = async (name: FixtureName, fileName: string = name) => parseBytes(new Uint8Array(await fixtureBytes(name)), fileName);

describe("BuiltinParser", () => {
  it.each([
    ["company.md", "builtin:markdown", "text/markdown"],
    ["prose.txt", "builtin:text", "text/plain"],
    ["field-guide.html", "builtin:html", "text/html"],
    ["customers.csv", "builtin:csv", "text/csv"],
    ["routes.json", "builtin:json", "application/json"],
    ["lighthouses.pdf", "builtin:pdf", "application/pdf"],
  ] as [FixtureName, string, string][])("routes %s to %s", async (file, parserName, mimeType) => {
    const parsed = await parseFixture(file);
    expect(parsed.parser).toBe(parserName);
    expect(parsed.mimeType).toBe(mimeType);
    expect(parsed.text.length).toBeGreaterThan(100);
  });

  it("records the encoding of text formats", async () => {
    const md = await parseFixture("rules-zh.md");
    expect(md.metadata.encoding).toBe("UTF-8");
    expect(md.sections.length).toBe(CHINESE_RULES_FACT.sectionCount);
    const utf16 = await parseFixture("prose-utf16.txt");
    expect(utf16.metadata.encoding).toBe("UTF-16LE");
    expect(utf16.text).toContain("Ottilie Brandauer");
    const gbk = iconv.encode("标题,内容\n数据并行,每块GPU上维护一个模型副本并通过集体通信同步梯度\n", "gb18030");
    const csv = await parser.parse({ bytes: new Uint8Array(gbk), fileName: "gbk.csv", declaredMimeType: "text/csv" });
    expect(csv.metadata.encoding).toBe("GB18030");
    expect(csv.text).toBe("Columns: 标题; 内容\n标题: 数据并行; 内容: 每块GPU上维护一个模型副本并通过集体通信同步梯度");
  });

  it("reads GB18030 Markdown as Chinese", async () => {
    const notes = await parseFixture("notes-zh-gb18030.txt", "notes-zh.md");
    expect(notes.metadata.encoding).toBe("GB18030");
    expect(notes.sections.map((s) => s.path)).toEqual([["家庭养蜂要点"]]);
    expect(notes.text).toContain("每群蜜蜂只有一只蜂王");
  });

  it("reads plain text in many scripts", async () => {
    const parsed = await parseFixture("scripts.txt");
    for (const line of ["每个人都应该被善待", "Κάθε άνθρωπος", "كل إنسان يستحق", "모든 사람은", "ทุกคนสมควร"]) expect(parsed.text).toContain(line);
    expect(parsed.pages).toEqual([]);
  });

  it("names the format it cannot read and points at Tika", async () => {
    await expect(parseFixture("canal-boating.docx")).rejects.toThrow(
      new FailedPreconditionError(
        "canal-boating.docx is a Word document (application/vnd.openxmlformats-officedocument.wordprocessingml.document); " +
          "the built-in parsers read text, Markdown, HTML, CSV/TSV, JSON and PDF — configure TIKA_URL to parse it with Apache Tika",
      ),
    );
    await expect(parseFixture("ferries.xlsx")).rejects.toThrow(/^ferries\.xlsx is an Excel spreadsheet .*TIKA_URL/);
    await expect(parseFixture("harbour-verses.epub")).rejects.toThrow(/is an EPUB e-book \(application\/epub\+zip\)/);
    await expect(parseFixture("allotment.odt")).rejects.toThrow(/is an OpenDocument text \(application\/vnd\.oasis\.opendocument\.text\)/);
    await expect(parseBytes(ole2Header(), "old-report.doc")).rejects.toThrow(/is a legacy Word document \(\.doc\) \(application\/msword\)/);
    const pptx = zipArchive({ "[Content_Types].xml": "<Types/>", "ppt/presentation.xml": "<p:presentation/>" });
    await expect(parseBytes(pptx, "deck.pptx")).rejects.toThrow(/deck\.pptx is a PowerPoint presentation .*TIKA_URL/);
  });

  it("sends a PDF without a text layer to Tika with a reason", async () => {
    await expect(parseFixture("scanned.pdf")).rejects.toThrow(/has no text layer/);
  });

  it("refuses an empty upload and binary bytes posing as text", async () => {
    await expect(parser.parse({ bytes: new Uint8Array(), fileName: "a.txt", declaredMimeType: "text/plain" })).rejects.toThrow(
      new InvalidInputError("the file is empty"),
    );
    const docx = new Uint8Array(await fixtureBytes("canal-boating.docx"));
    // A zip renamed .txt is still detected as a Word document.
    await expect(parser.parse({ bytes: docx, fileName: "notes.txt", declaredMimeType: "text/plain" })).rejects.toThrow(FailedPreconditionError);
    const blob = new Uint8Array(2000).map((_, i) => (i % 3 === 0 ? 0 : i % 251));
    await expect(parser.parse({ bytes: blob, fileName: "notes.txt", declaredMimeType: "text/plain" })).rejects.toThrow(/^not valid text: /);
  });
});

describeWithShared("corpus/docs", "BuiltinParser on real-world files", (docs) => {
  const parseFile = (fileName: string) => parseBytes(new Uint8Array(readFileSync(path.join(docs, fileName))), fileName);

  it.each([
    ["wiki.md", "builtin:markdown"],
    ["norwich-city.txt", "builtin:text"],
    ["wiki_duck.html", "builtin:html"],
    ["csv-comma.csv", "builtin:csv"],
    ["multi_page.pdf", "builtin:pdf"],
  ])("routes %s to %s", async (file, parserName) => {
    expect((await parseFile(file)).parser).toBe(parserName);
  });

  it("reads the UDHR's first article in many scripts", async () => {
    expect((await parseFile("UDHR_first_article_all.txt")).text).toContain("人人生而自由");
  });

  it("sends a scanned PDF and a legacy .doc to Tika with a reason", async () => {
    await expect(parseFile("scanned_ocr_test.pdf")).rejects.toThrow(/has no text layer/);
    await expect(parseFile("legacy_sample.doc")).rejects.toThrow(/is a legacy Word document \(\.doc\) \(application\/msword\)/);
  });
});
