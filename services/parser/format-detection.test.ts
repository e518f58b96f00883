import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fixtureBytes, ole2Header, zipArchive, type FixtureName } from "../../test/fixtures/fixture-documents.ts";
import { describeWithShared } from "../../test/support/shared-material.ts";
import { detectFormat, withArticle } from "./format-detection.ts";

const OCTET = "application/octet-stream";
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

// The fixtures the tests below read, built (or read from the cache) once.
const NAMES: FixtureName[] = ["lighthouses.pdf", "canal-boating.docx", "ferries.xlsx", "allotment.odt", "harbour-verses.epub", "company.md", "customers.csv", "field-guide.html", "filing.html", "prose.txt"];
const bytes = new Map<string, Uint8Array>();
const read = (name: string) => bytes.get(name)!;
// A presentation is told by its ppt/ entries; these are the ones every .pptx has.
const pptx = new Uint8Array(zipArchive({ "[Content_Types].xml": "<Types/>", "_rels/.rels": "<Relationships/>", "ppt/presentation.xml": "<p:presentation/>" }));

describe("detectFormat", () => {
  beforeAll(async () => {
    for (const name of NAMES) bytes.set(name, new Uint8Array(await fixtureBytes(name)));
  });

  // The bytes alone decide for signed formats: each file goes in under a name that says nothing.
  it.each([
    ["lighthouses.pdf", "pdf", "application/pdf"],
    ["canal-boating.docx", "docx", DOCX],
    ["ferries.xlsx", "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
    ["allotment.odt", "odt", "application/vnd.oasis.opendocument.text"],
    ["harbour-verses.epub", "epub", "application/epub+zip"],
  ])("recognises %s from its bytes", (file, format, mimeType) => {
    expect(detectFormat(read(file), "upload", OCTET)).toMatchObject({ format, mimeType });
  });

  it("recognises a presentation by its ppt/ entries and an OLE2 file by its signature", () => {
    expect(detectFormat(pptx, "upload", OCTET)).toMatchObject({
      format: "pptx",
      mimeType: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    });
    expect(detectFormat(ole2Header(), "upload", OCTET)).toMatchObject({ format: "ole2", mimeType: "application/x-tika-msoffice" });
  });

  it("uses the name to tell an OLE2 file's kind", () => {
    expect(detectFormat(ole2Header(), "old-report.doc", OCTET)).toMatchObject({ format: "doc", mimeType: "application/msword" });
    expect(detectFormat(ole2Header(), "old-sheet.xls", OCTET).format).toBe("xls");
  });

  it("believes the bytes over a misleading name and declared type", () => {
    expect(detectFormat(read("lighthouses.pdf"), "notes.txt", "text/plain").format).toBe("pdf");
    expect(detectFormat(read("canal-boating.docx"), "report.pdf", "application/pdf").format).toBe("docx");
    // A text file named .pdf is no PDF.
    expect(detectFormat(read("company.md"), "company.pdf", "application/pdf").format).toBe("text");
  });

  it("reads text formats from the name, then the declared type", () => {
    expect(detectFormat(read("company.md"), "company.md", OCTET).format).toBe("markdown");
    expect(detectFormat(read("customers.csv"), "customers.csv", OCTET).format).toBe("csv");
    expect(detectFormat(read("customers.csv"), "export", "text/csv").format).toBe("csv");
    expect(detectFormat(read("company.md"), "company", "text/markdown; charset=utf-8").format).toBe("markdown");
    expect(detectFormat(new TextEncoder().encode('{"a":1}'), "data.json", OCTET).format).toBe("json");
    expect(detectFormat(new TextEncoder().encode("a\tb"), "table.tsv", OCTET).format).toBe("tsv");
  });

  it("sniffs HTML and plain text when neither name nor type helps", () => {
    expect(detectFormat(read("field-guide.html"), "seal", OCTET)).toMatchObject({ format: "html", mimeType: "text/html" });
    expect(detectFormat(read("filing.html"), "10k", OCTET).format).toBe("html");
    expect(detectFormat(read("prose.txt"), "clockmaker", OCTET)).toMatchObject({ format: "text", mimeType: "text/plain" });
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

describeWithShared("corpus/docs", "detectFormat on real-world files", (docs) => {
  const readShared = (name: string) => new Uint8Array(readFileSync(path.join(docs, name)));

  it.each([
    ["multi_page.pdf", "pdf"],
    ["word_sample.docx", "docx"],
    ["handbook-1p.docx", "docx"],
    ["powerpoint_sample.pptx", "pptx"],
    ["vodafone.xlsx", "xlsx"],
    ["text_document_01.odt", "odt"],
    ["epub_purvis_poetry.epub", "epub"],
    ["winter-sports.epub", "epub"],
    ["legacy_sample.doc", "ole2"],
  ])("recognises %s from its bytes", (file, format) => {
    expect(detectFormat(readShared(file), "upload", OCTET).format).toBe(format);
  });

  it("sniffs real HTML and text", () => {
    expect(detectFormat(readShared("wiki_duck.html"), "duck", OCTET).format).toBe("html");
    expect(detectFormat(readShared("example-10k-1p.html"), "10k", OCTET).format).toBe("html");
    expect(detectFormat(readShared("norwich-city.txt"), "norwich", OCTET).format).toBe("text");
  });
});
