import { readFileSync } from "node:fs";
import path from "node:path";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import { BuiltinParser } from "./builtin-parser.ts";

const docs = path.resolve(process.cwd(), "../shared/corpus/docs");
const parser = new BuiltinParser();
const parseFile = (fileName: string, declaredMimeType = "application/octet-stream") =>
  parser.parse({ bytes: new Uint8Array(readFileSync(path.join(docs, fileName))), fileName, declaredMimeType });

describe("BuiltinParser", () => {
  it.each([
    ["wiki.md", "builtin:markdown", "text/markdown"],
    ["norwich-city.txt", "builtin:text", "text/plain"],
    ["wiki_duck.html", "builtin:html", "text/html"],
    ["csv-comma.csv", "builtin:csv", "text/csv"],
    ["multi_page.pdf", "builtin:pdf", "application/pdf"],
  ])("routes %s to %s", async (file, parserName, mimeType) => {
    const parsed = await parseFile(file);
    expect(parsed.parser).toBe(parserName);
    expect(parsed.mimeType).toBe(mimeType);
    expect(parsed.text.length).toBeGreaterThan(100);
  });

  it("records the encoding of text formats", async () => {
    const md = await parseFile("zh_procuratorate_admin_litigation_rules_2016.md");
    expect(md.metadata.encoding).toBe("UTF-8");
    expect(md.sections.length).toBe(10);
    const gbk = iconv.encode("标题,内容\n数据并行,每块GPU上维护一个模型副本并通过集体通信同步梯度\n", "gb18030");
    const csv = await parser.parse({ bytes: new Uint8Array(gbk), fileName: "gbk.csv", declaredMimeType: "text/csv" });
    expect(csv.metadata.encoding).toBe("GB18030");
    expect(csv.text).toBe("Columns: 标题; 内容\n标题: 数据并行; 内容: 每块GPU上维护一个模型副本并通过集体通信同步梯度");
  });

  it("reads plain text in many scripts", async () => {
    const parsed = await parseFile("UDHR_first_article_all.txt");
    expect(parsed.text).toContain("人人生而自由");
    expect(parsed.pages).toEqual([]);
  });

  it("names the format it cannot read and points at Tika", async () => {
    await expect(parseFile("word_sample.docx")).rejects.toThrow(
      new FailedPreconditionError(
        "word_sample.docx is a Word document (application/vnd.openxmlformats-officedocument.wordprocessingml.document); " +
          "the built-in parsers read text, Markdown, HTML, CSV/TSV, JSON and PDF — configure TIKA_URL to parse it with Apache Tika",
      ),
    );
    await expect(parseFile("vodafone.xlsx")).rejects.toThrow(/^vodafone\.xlsx is an Excel spreadsheet .*TIKA_URL/);
    await expect(parseFile("epub_purvis_poetry.epub")).rejects.toThrow(/is an EPUB e-book \(application\/epub\+zip\)/);
    await expect(parseFile("legacy_sample.doc")).rejects.toThrow(/is a legacy Word document \(\.doc\) \(application\/msword\)/);
  });

  it("sends a scanned PDF to Tika with a reason", async () => {
    await expect(parseFile("scanned_ocr_test.pdf")).rejects.toThrow(/has no text layer/);
  });

  it("refuses an empty upload and binary bytes posing as text", async () => {
    await expect(parser.parse({ bytes: new Uint8Array(), fileName: "a.txt", declaredMimeType: "text/plain" })).rejects.toThrow(
      new InvalidInputError("the file is empty"),
    );
    const docx = new Uint8Array(readFileSync(path.join(docs, "word_sample.docx")));
    // A zip renamed .txt is still detected as a Word document.
    await expect(parser.parse({ bytes: docx, fileName: "notes.txt", declaredMimeType: "text/plain" })).rejects.toThrow(FailedPreconditionError);
    const blob = new Uint8Array(2000).map((_, i) => (i % 3 === 0 ? 0 : i % 251));
    await expect(parser.parse({ bytes: blob, fileName: "notes.txt", declaredMimeType: "text/plain" })).rejects.toThrow(/^not valid text: /);
  });
});
