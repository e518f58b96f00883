import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PageSpan, ParsedDocument } from "../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, UnavailableError } from "../../lib/errors.ts";
import { describeWithEngine } from "../../test/support/engines.ts";
import { TikaClient } from "./tika-client.ts";
import { TikaParser } from "./tika-parser.ts";

const docs = path.resolve(process.cwd(), "../shared/corpus/docs");
const input = (fileName: string) => ({
  bytes: new Uint8Array(readFileSync(path.join(docs, fileName))),
  fileName,
  declaredMimeType: "application/octet-stream",
});
const pageOf = (pages: PageSpan[], offset: number) => pages.find((p) => offset >= p.start && offset < p.end)?.number ?? 0;

describe("TikaParser without a server", () => {
  it("fails with Unavailable so the document can be retried", async () => {
    const parser = new TikaParser(new TikaClient({ baseUrl: "http://127.0.0.1:9", timeoutMs: 2000 }));
    await expect(parser.parse(input("word_sample.docx"))).rejects.toThrow(UnavailableError);
  });

  it("refuses an empty upload before calling Tika", async () => {
    const parser = new TikaParser(new TikaClient({ baseUrl: "http://127.0.0.1:9" }));
    await expect(parser.parse({ bytes: new Uint8Array(), fileName: "a.docx", declaredMimeType: "" })).rejects.toThrow(
      new InvalidInputError("the file is empty"),
    );
  });
});

describeWithEngine("TIKA_URL", "TikaParser against a real Tika server", (tikaUrl) => {
  const parser = new TikaParser(new TikaClient({ baseUrl: tikaUrl }));

  it("reads a Word document with its headings and table cells", async () => {
    const doc = await parser.parse(input("word_sample.docx"));
    expect(doc.parser).toBe("tika");
    expect(doc.mimeType).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    expect(doc.metadata.author).toBe("Christoph Auer");
    expect(doc.text).toContain("To get started with swimming, first lay down in a water and try not to drown:");
    expect(doc.text).toContain("Leaves | Ash, Elm, Maple | 50");
    const eat = doc.sections.find((s) => s.path.at(-1) === "Let’s eat");
    expect(eat?.path).toEqual(["Let’s swim!", "Let’s eat"]);
    expect(doc.text.slice(eat!.start, eat!.end)).toContain("I like to eat leaves");
    expect(doc.pages).toEqual([]);
  });

  it("gives each slide of a presentation a page, notes included", async () => {
    const doc = await parser.parse(input("powerpoint_sample.pptx"));
    expect(doc.pages.map((p) => p.number)).toEqual([1, 2, 3]);
    expect(pageOf(doc.pages, doc.text.indexOf("Test Table Slide"))).toBe(1);
    expect(pageOf(doc.pages, doc.text.indexOf("Second slide title"))).toBe(2);
    expect(pageOf(doc.pages, doc.text.indexOf("Some notes on the second slide."))).toBe(2);
    expect(pageOf(doc.pages, doc.text.indexOf("List item4"))).toBe(3);
  });

  it("reads a spreadsheet row by row, sheets as sections, without pages", async () => {
    const doc = await parser.parse(input("vodafone.xlsx"));
    expect(doc.text).toContain("Quarterly revenue | Nine quarters to 30 June 2023 | 1");
    expect(doc.sections[0].path).toEqual(["Index"]);
    expect(doc.pages).toEqual([]);
  });

  it("reads OpenDocument text without the OCR of its thumbnail", async () => {
    const doc = await parser.parse(input("text_document_01.odt"));
    expect(doc.mimeType).toBe("application/vnd.oasis.opendocument.text");
    expect(doc.text.startsWith("Title\n\nSubtitle")).toBe(true);
    expect(doc.sections.map((s) => s.path)).toEqual([
      ["heading level 1.0"],
      ["heading level 1.0", "Heading level 2: A"],
      ["heading level 1.0", "Heading level 2: B"],
    ]);
  });

  it("reads an EPUB with its chapters as sections", async () => {
    const doc = await parser.parse(input("epub_purvis_poetry.epub"));
    expect(doc.metadata).toMatchObject({ title: "Poetry", author: "Sarah Louisa Forten Purvis" });
    const grave = doc.sections.find((s) => s.path.at(-1) === "The Grave of the Slave");
    expect(grave?.path).toEqual(["Poetry", "The Grave of the Slave"]);
  });

  it("maps PDF text to its pages", async () => {
    const doc = await parser.parse(input("multi_page.pdf"));
    expect(doc.mimeType).toBe("application/pdf");
    expect(doc.metadata.pageCount).toBe("5");
    expect(doc.pages.map((p) => p.number)).toEqual([1, 2, 3, 4, 5]);
    expect(pageOf(doc.pages, doc.text.indexOf("Other notable software from this era included WordPerfect"))).toBe(2);
    expect(pageOf(doc.pages, doc.text.indexOf("The journey of the word processor"))).toBe(5);
  });

  it("reads a legacy .doc", async () => {
    const doc = await parser.parse(input("legacy_sample.doc"));
    expect(doc.mimeType).toBe("application/msword");
    expect(doc.text).toContain("Swimming in the lake");
  });

  it("OCRs a scanned PDF, or says that no text could be extracted", async () => {
    // Whether this Tika has Tesseract is its deployment's choice; both outcomes must be explicit.
    const result: ParsedDocument | Error = await parser.parse(input("scanned_ocr_test.pdf")).catch((error: Error) => error);
    if (result instanceof Error) {
      expect(result).toBeInstanceOf(FailedPreconditionError);
      expect(result.message).toMatch(/no text could be extracted from scanned_ocr_test\.pdf/);
    } else {
      expect(result.text).toMatch(/Docling bundles PDF document conversion/);
      expect(result.pages).toHaveLength(1);
    }
  });
});
