import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import { parsePdf } from "./pdf-parser.ts";

const docs = path.resolve(process.cwd(), "../shared/corpus/docs");
const read = (name: string) => new Uint8Array(readFileSync(path.join(docs, name)));

function pageOf(pages: { number: number; start: number; end: number }[], offset: number): number {
  return pages.find((p) => offset >= p.start && offset < p.end)?.number ?? 0;
}

describe("parsePdf", () => {
  it("maps text to the pages it is printed on", async () => {
    const { text, pages, metadata } = await parsePdf(read("multi_page.pdf"), "multi_page.pdf");
    expect(pages.map((p) => p.number)).toEqual([1, 2, 3, 4, 5]);
    expect(metadata.pageCount).toBe("5");
    const phrases: [string, number][] = [
      ["The Evolution of the Word Processor", 1],
      ["Other notable software from this era included WordPerfect", 2],
      ["Specialized Word Processing Tools", 3],
      ["Accessibility: Writers no longer needed expensive publishing equipment", 4],
      ["The journey of the word processor", 5],
    ];
    for (const [phrase, page] of phrases) {
      const at = text.indexOf(phrase);
      expect(at, phrase).toBeGreaterThanOrEqual(0);
      expect(pageOf(pages, at), phrase).toBe(page);
    }
  });

  it("joins pages with a blank line and keeps spans inside the text", async () => {
    const { text, pages } = await parsePdf(read("multi_page.pdf"), "multi_page.pdf");
    for (let i = 1; i < pages.length; i++) {
      expect(text.slice(pages[i - 1].end, pages[i].start)).toBe("\n\n");
    }
    expect(pages[0].start).toBe(0);
    expect(pages[pages.length - 1].end).toBe(text.length);
  });

  it("reads a one-page paper with a results table", async () => {
    const { text, pages } = await parsePdf(read("2305.03393v1-pg9.pdf"), "2305.03393v1-pg9.pdf");
    expect(pages).toEqual([{ number: 1, start: 0, end: text.length }]);
    expect(text.startsWith("Optimized Table Tokenization for Table Structure Recognition")).toBe(true);
    expect(text).toContain("5.1 Hyper Parameter Optimization");
    expect(text).toContain("OTSL 0.965 0.934 0.955");
  });

  it("reads CJK text", async () => {
    const { text } = await parsePdf(read("zh_ocr_test.pdf"), "zh_ocr_test.pdf");
    expect(text).toBe("我是文字");
  });

  it("refuses a scanned PDF without a text layer, pointing at Tika", async () => {
    const parsing = parsePdf(read("scanned_loremipsum-flat.pdf"), "scanned_loremipsum-flat.pdf");
    await expect(parsing).rejects.toThrow(FailedPreconditionError);
    await expect(parsing).rejects.toThrow(/scanned_loremipsum-flat\.pdf has no text layer.*Tika parser \(with OCR\)/);
  });

  it("refuses a truncated PDF as corrupt", async () => {
    const whole = read("multi_page.pdf");
    const parsing = parsePdf(whole.slice(0, Math.floor(whole.length / 2)), "half.pdf");
    await expect(parsing).rejects.toThrow(InvalidInputError);
    await expect(parsing).rejects.toThrow(/^corrupt or unreadable PDF: /);
  });

  it("leaves the caller's bytes usable", async () => {
    const bytes = read("2305.03393v1-pg9.pdf");
    await parsePdf(bytes, "a.pdf");
    expect(bytes.byteLength).toBeGreaterThan(0);
    await expect(parsePdf(bytes, "a.pdf")).resolves.toMatchObject({ pages: [{ number: 1 }] });
  });
});
