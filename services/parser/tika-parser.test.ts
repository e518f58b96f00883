import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PageSpan, ParsedDocument } from "../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError, UnavailableError } from "../../lib/errors.ts";
import { fixtureBytes, type FixtureName } from "../../test/fixtures/fixture-documents.ts";
import { DOCX_CONTENT, EPUB_CONTENT, ODT_CONTENT, PDF_CHINESE_PAGE, PDF_PAGES } from "../../test/fixtures/fixture-texts.ts";
import { describeWithEngine } from "../../test/support/engines.ts";
import { describeWithShared } from "../../test/support/shared-material.ts";
import { TikaClient } from "./tika-client.ts";
import { TikaParser } from "./tika-parser.ts";

const input = async (fileName: FixtureName) => ({
  bytes: new Uint8Array(await fixtureBytes(fileName)),
  fileName,
  declaredMimeType: "application/octet-stream",
});
const pageOf = (pages: PageSpan[], offset: number) => pages.find((p) => offset >= p.start && offset < p.end)?.number ?? 0;

describe("TikaParser without a server", () => {
  it("fails with Unavailable so the document can be retried", async () => {
    const parser = new TikaParser(new TikaClient({ baseUrl: "http://127.0.0.1:9", timeoutMs: 2000 }));
    await expect(parser.parse(await input("canal-boating.docx"))).rejects.toThrow(UnavailableError);
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

  it("reads a Word document with its headings, table cells and author", async () => {
    const doc = await parser.parse(await input("canal-boating.docx"));
    const c = DOCX_CONTENT;
    expect(doc.parser).toBe("tika");
    expect(doc.mimeType).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    expect(doc.metadata).toMatchObject({ title: c.title, author: c.author });
    expect(doc.text).toContain(c.steps[0]);
    expect(doc.text).toContain(c.tableRows[0].join(" | "));
    const lock = doc.sections.find((s) => s.path.at(-1) === c.heading);
    expect(lock?.path).toEqual([c.title, c.heading]);
    expect(doc.text.slice(lock!.start, lock!.end)).toContain(c.steps[1]);
    expect(doc.text.slice(lock!.start, lock!.end)).not.toContain(c.mooring);
    expect(doc.pages).toEqual([]);
  });

  it("reads a spreadsheet row by row, sheets as sections, without pages", async () => {
    const doc = await parser.parse(await input("ferries.xlsx"));
    expect(doc.text).toContain("Quarterly ridership | Eight quarters to 30 June 2025 | 1");
    expect(doc.text).toContain("Q2 2024 | 455000 | 19400");
    expect(doc.sections.map((s) => s.path)).toEqual([["Index"], ["Ridership"]]);
    const ridership = doc.sections[1];
    expect(doc.text.slice(ridership.start, ridership.end)).toContain("Q3 2023 | 412000 | 18300");
    expect(doc.pages).toEqual([]);
  });

  it("reads OpenDocument text with its heading levels", async () => {
    const doc = await parser.parse(await input("allotment.odt"));
    expect(doc.mimeType).toBe("application/vnd.oasis.opendocument.text");
    expect(doc.text.startsWith(ODT_CONTENT.title)).toBe(true);
    expect(doc.sections.map((s) => s.path)).toEqual([["Spring"], ["Spring", "Potatoes"], ["Autumn"]]);
  });

  it("reads an EPUB with its chapters as sections", async () => {
    const doc = await parser.parse(await input("harbour-verses.epub"));
    expect(doc.metadata).toMatchObject({ title: EPUB_CONTENT.title, author: EPUB_CONTENT.author });
    const [, second] = EPUB_CONTENT.chapters;
    const lamp = doc.sections.find((s) => s.path.at(-1) === second.title);
    expect(lamp?.path).toEqual([EPUB_CONTENT.title, second.title]);
    expect(doc.text.slice(lamp!.start, lamp!.end)).toContain(second.lines[1]);
  });

  it("maps PDF text to its pages, the Chinese page included", async () => {
    const doc = await parser.parse(await input("lighthouses.pdf"));
    expect(doc.mimeType).toBe("application/pdf");
    expect(doc.metadata.pageCount).toBe("5");
    expect(doc.pages.map((p) => p.number)).toEqual([1, 2, 3, 4, 5]);
    PDF_PAGES.forEach((page, i) => {
      for (const phrase of [page.heading, ...page.paragraphs]) expect(pageOf(doc.pages, doc.text.indexOf(phrase)), phrase).toBe(i + 1);
    });
    expect(doc.text).toContain(PDF_PAGES[PDF_CHINESE_PAGE - 1].paragraphs[1]);
  });

  it("says that no text could be extracted from a PDF without a text layer, or OCRs it", async () => {
    // The fixture holds only drawings; whether this Tika has Tesseract is its deployment's choice.
    const result: ParsedDocument | Error = await parser.parse(await input("scanned.pdf")).catch((error: Error) => error);
    if (result instanceof Error) {
      expect(result).toBeInstanceOf(FailedPreconditionError);
      expect(result.message).toMatch(/no text could be extracted from scanned\.pdf/);
    } else {
      expect(result.pages).toHaveLength(1);
    }
  });

  describeWithShared("corpus/docs", "on real-world files", (docs) => {
    const real = (fileName: string) => ({ bytes: new Uint8Array(readFileSync(path.join(docs, fileName))), fileName, declaredMimeType: "application/octet-stream" });

    it("reads a Word document with its headings and table cells", async () => {
      const doc = await parser.parse(real("word_sample.docx"));
      expect(doc.metadata.author).toBe("Christoph Auer");
      expect(doc.text).toContain("Leaves | Ash, Elm, Maple | 50");
      expect(doc.sections.find((s) => s.path.at(-1) === "Let’s eat")?.path).toEqual(["Let’s swim!", "Let’s eat"]);
    });

    it("gives each slide of a presentation a page, notes included", async () => {
      const doc = await parser.parse(real("powerpoint_sample.pptx"));
      expect(doc.pages.map((p) => p.number)).toEqual([1, 2, 3]);
      expect(pageOf(doc.pages, doc.text.indexOf("Test Table Slide"))).toBe(1);
      expect(pageOf(doc.pages, doc.text.indexOf("Some notes on the second slide."))).toBe(2);
      expect(pageOf(doc.pages, doc.text.indexOf("List item4"))).toBe(3);
    });

    it("reads a spreadsheet, OpenDocument text without its thumbnail's OCR, and an EPUB", async () => {
      expect((await parser.parse(real("vodafone.xlsx"))).text).toContain("Quarterly revenue | Nine quarters to 30 June 2023 | 1");
      const odt = await parser.parse(real("text_document_01.odt"));
      expect(odt.text.startsWith("Title\n\nSubtitle")).toBe(true);
      const epub = await parser.parse(real("epub_purvis_poetry.epub"));
      expect(epub.sections.find((s) => s.path.at(-1) === "The Grave of the Slave")?.path).toEqual(["Poetry", "The Grave of the Slave"]);
    });

    it("reads a legacy .doc", async () => {
      const doc = await parser.parse(real("legacy_sample.doc"));
      expect(doc.mimeType).toBe("application/msword");
      expect(doc.text).toContain("Swimming in the lake");
    });

    it("OCRs a scanned PDF, or says that no text could be extracted", async () => {
      const result: ParsedDocument | Error = await parser.parse(real("scanned_ocr_test.pdf")).catch((error: Error) => error);
      if (result instanceof Error) {
        expect(result).toBeInstanceOf(FailedPreconditionError);
        expect(result.message).toMatch(/no text could be extracted from scanned_ocr_test\.pdf/);
      } else {
        expect(result.text).toMatch(/Docling bundles PDF document conversion/);
        expect(result.pages).toHaveLength(1);
      }
    });
  });
});
