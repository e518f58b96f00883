import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import { generatedPdf, patchedBytes } from "../../../lib/testing/generated-documents.ts";
import { fixtureBytes } from "../../../test/fixtures/fixture-documents.ts";
import { PDF_CHINESE_PAGE, PDF_PAGES } from "../../../test/fixtures/fixture-texts.ts";
import { describeWithShared } from "../../../test/support/shared-material.ts";
import { parsePdf } from "./pdf-parser.ts";

const lighthouses = async () => new Uint8Array(await fixtureBytes("lighthouses.pdf"));

function pageOf(pages: { number: number; start: number; end: number }[], offset: number): number {
  return pages.find((p) => offset >= p.start && offset < p.end)?.number ?? 0;
}

/** Where a phrase starts in the text, whatever line breaks the PDF's layout put between its words. */
function find(text: string, phrase: string): number {
  const pattern = phrase.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "\\s+");
  return text.search(new RegExp(pattern));
}

describe("parsePdf", () => {
  it("maps each page's heading and text to the page it is printed on", async () => {
    const { text, pages, metadata } = await parsePdf(await lighthouses(), "lighthouses.pdf");
    expect(pages.map((p) => p.number)).toEqual([1, 2, 3, 4, 5]);
    expect(metadata).toMatchObject({ pageCount: "5", title: "A Short History of Lighthouses", author: "Quarry Test Authors" });
    PDF_PAGES.forEach((page, i) => {
      for (const phrase of [page.heading, ...page.paragraphs]) {
        const at = find(text, phrase);
        expect(at, phrase).toBeGreaterThanOrEqual(0);
        expect(pageOf(pages, at), phrase).toBe(i + 1);
      }
      // Each page opens with its heading.
      expect(text.slice(pages[i].start).startsWith(page.heading)).toBe(true);
    });
  });

  it("joins pages with a blank line and keeps spans inside the text", async () => {
    const { text, pages } = await parsePdf(await lighthouses(), "lighthouses.pdf");
    for (let i = 1; i < pages.length; i++) {
      expect(text.slice(pages[i - 1].end, pages[i].start)).toBe("\n\n");
    }
    expect(pages[0].start).toBe(0);
    expect(pages[pages.length - 1].end).toBe(text.length);
  });

  it("reads the Chinese page in an embedded CJK font, line by line", async () => {
    const { text, pages } = await parsePdf(await lighthouses(), "lighthouses.pdf");
    const page = pages[PDF_CHINESE_PAGE - 1];
    const chinese = PDF_PAGES[PDF_CHINESE_PAGE - 1];
    expect(text.slice(page.start, page.end)).toBe([chinese.heading, ...chinese.paragraphs].join("\n"));
  });

  it("refuses a PDF without a text layer, pointing at Tika", async () => {
    const parsing = parsePdf(new Uint8Array(await fixtureBytes("scanned.pdf")), "scanned.pdf");
    await expect(parsing).rejects.toThrow(FailedPreconditionError);
    await expect(parsing).rejects.toThrow(/scanned\.pdf has no text layer.*Tika parser \(with OCR\)/);
  });

  it("refuses a truncated PDF as corrupt", async () => {
    const whole = await lighthouses();
    const parsing = parsePdf(whole.slice(0, Math.floor(whole.length / 2)), "half.pdf");
    await expect(parsing).rejects.toThrow(InvalidInputError);
    await expect(parsing).rejects.toThrow(/^corrupt or unreadable PDF: /);
  });

  it("fails a PDF whose page cannot be read, naming the page, instead of indexing the rest", async () => {
    const whole = new Uint8Array(await generatedPdf(4, 30));
    // pdfkit writes each page's content stream and then its font's: the third stream is page 2's.
    const raw = Buffer.from(whole).toString("latin1");
    const streams = [...raw.matchAll(/stream\n/g)].map((m) => m.index + m[0].length);
    const damaged = new Uint8Array(whole);
    for (let i = 20; i < 60; i++) damaged[streams[2] + i] ^= 0x55;
    const parsing = parsePdf(damaged, "bitflip.pdf");
    await expect(parsing).rejects.toThrow(InvalidInputError);
    await expect(parsing).rejects.toThrow(/^bitflip\.pdf is damaged: page 2 of 4 could not be read \(/);
  });

  it("fails a PDF that pdf.js would have read in part without a word (issue 23's silent partial reads)", async () => {
    // Two 8-byte patches (seed 13): read leniently, page 1 gives 1 text item of 30 and page 4 25.
    const damaged = patchedBytes(new Uint8Array(await generatedPdf(6, 30)), 13, { patches: 2, length: 8 });
    await expect(parsePdf(damaged, "patched.pdf")).rejects.toThrow(/^patched\.pdf is damaged: pages 1, 4 of 6 could not be read/);
  });

  it("leaves the caller's bytes usable", async () => {
    const bytes = await lighthouses();
    await parsePdf(bytes, "a.pdf");
    expect(bytes.byteLength).toBeGreaterThan(0);
    await expect(parsePdf(bytes, "a.pdf")).resolves.toMatchObject({ pages: [{ number: 1 }, { number: 2 }, { number: 3 }, { number: 4 }, { number: 5 }] });
  });
});

describeWithShared("corpus/docs", "parsePdf on real-world PDFs", (docs) => {
  const read = (name: string) => new Uint8Array(readFileSync(path.join(docs, name)));

  it("maps a word processor history to its five pages", async () => {
    const { text, pages } = await parsePdf(read("multi_page.pdf"), "multi_page.pdf");
    expect(pages.map((p) => p.number)).toEqual([1, 2, 3, 4, 5]);
    const phrases: [string, number][] = [
      ["The Evolution of the Word Processor", 1],
      ["Other notable software from this era included WordPerfect", 2],
      ["Specialized Word Processing Tools", 3],
      ["Accessibility: Writers no longer needed expensive publishing equipment", 4],
      ["The journey of the word processor", 5],
    ];
    for (const [phrase, page] of phrases) expect(pageOf(pages, text.indexOf(phrase)), phrase).toBe(page);
  });

  it("reads a one-page paper with a results table", async () => {
    const { text, pages } = await parsePdf(read("2305.03393v1-pg9.pdf"), "2305.03393v1-pg9.pdf");
    expect(pages).toEqual([{ number: 1, start: 0, end: text.length }]);
    expect(text.startsWith("Optimized Table Tokenization for Table Structure Recognition")).toBe(true);
    expect(text).toContain("OTSL 0.965 0.934 0.955");
  });

  it("reads CJK text", async () => {
    expect((await parsePdf(read("zh_ocr_test.pdf"), "zh_ocr_test.pdf")).text).toBe("我是文字");
  });

  it("refuses a scanned PDF without a text layer", async () => {
    await expect(parsePdf(read("scanned_loremipsum-flat.pdf"), "scanned_loremipsum-flat.pdf")).rejects.toThrow(FailedPreconditionError);
  });
});
