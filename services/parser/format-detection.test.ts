import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { detectFormat, withArticle } from "./format-detection.ts";

const docs = path.resolve(process.cwd(), "../shared/corpus/docs");
const read = (name: string) => new Uint8Array(readFileSync(path.join(docs, name)));
const OCTET = "application/octet-stream";

describe("detectFormat", () => {
  // The bytes alone decide for signed formats: each file goes in under a name that says nothing.
  it.each([
    ["multi_page.pdf", "pdf", "application/pdf"],
    ["word_sample.docx", "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    ["handbook-1p.docx", "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    ["powerpoint_sample.pptx", "pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"],
    ["vodafone.xlsx", "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
    ["text_document_01.odt", "odt", "application/vnd.oasis.opendocument.text"],
    ["epub_purvis_poetry.epub", "epub", "application/epub+zip"],
    ["winter-sports.epub", "epub", "application/epub+zip"],
    ["legacy_sample.doc", "ole2", "application/x-tika-msoffice"],
  ])("recognises %s from its bytes", (file, format, mimeType) => {
    expect(detectFormat(read(file), "upload", OCTET)).toMatchObject({ format, mimeType });
  });

  it("uses the name to tell an OLE2 file's kind", () => {
    expect(detectFormat(read("legacy_sample.doc"), "legacy_sample.doc", OCTET)).toMatchObject({ format: "doc", mimeType: "application/msword" });
  });

  it("believes the bytes over a misleading name and declared type", () => {
    expect(detectFormat(read("multi_page.pdf"), "notes.txt", "text/plain").format).toBe("pdf");
    expect(detectFormat(read("word_sample.docx"), "report.pdf", "application/pdf").format).toBe("docx");
    // A text file named .pdf is no PDF.
    expect(detectFormat(read("wiki.md"), "wiki.pdf", "application/pdf").format).toBe("text");
  });

  it("reads text formats from the name, then the declared type", () => {
    expect(detectFormat(read("wiki.md"), "wiki.md", OCTET).format).toBe("markdown");
    expect(detectFormat(read("csv-comma.csv"), "csv-comma.csv", OCTET).format).toBe("csv");
    expect(detectFormat(read("csv-comma.csv"), "export", "text/csv").format).toBe("csv");
    expect(detectFormat(read("wiki.md"), "wiki", "text/markdown; charset=utf-8").format).toBe("markdown");
    expect(detectFormat(new TextEncoder().encode('{"a":1}'), "data.json", OCTET).format).toBe("json");
    expect(detectFormat(new TextEncoder().encode("a\tb"), "table.tsv", OCTET).format).toBe("tsv");
  });

  it("sniffs HTML and plain text when neither name nor type helps", () => {
    expect(detectFormat(read("wiki_duck.html"), "duck", OCTET)).toMatchObject({ format: "html", mimeType: "text/html" });
    expect(detectFormat(read("example-10k-1p.html"), "10k", OCTET).format).toBe("html");
    expect(detectFormat(read("norwich-city.txt"), "norwich", OCTET)).toMatchObject({ format: "text", mimeType: "text/plain" });
  });

  it("knows images and RTF by their signatures", () => {
    expect(detectFormat(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]), "x", OCTET).format).toBe("png");
    expect(detectFormat(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), "x", OCTET).format).toBe("jpeg");
    expect(detectFormat(new TextEncoder().encode("{\\rtf1\\ansi hello}"), "x.txt", OCTET).format).toBe("rtf");
  });

  it("calls unknown bytes binary", () => {
    expect(detectFormat(new Uint8Array([1, 0, 2, 0, 3, 0, 0, 0]), "blob", OCTET).format).toBe("binary");
  });
});

describe("withArticle", () => {
  it("picks a or an", () => {
    expect(withArticle("Word document")).toBe("a Word document");
    expect(withArticle("Excel spreadsheet")).toBe("an Excel spreadsheet");
    expect(withArticle("HTML page")).toBe("an HTML page");
  });
});
