import { describe, expect, it } from "vitest";
import { htmlToText, TIKA_XHTML_OPTIONS } from "./html-text.ts";
import { InvalidInputError } from "../../lib/errors.ts";

// The shape of Tika 3's XHTML for a PDF: metadata in the head, an empty title written as &#0;,
// one <div class="page"> per page, empty paragraphs as <p/>.
const TIKA_PDF = `<html xmlns="http://www.w3.org/1999/xhtml"><head>
<meta name="Content-Type" content="application/pdf"/><meta name="dc:creator" content="A"/><meta name="dc:creator" content="B"/>
<title>&#0;</title></head>
<body><div class="page"><p/>
<p>First page
line two </p>
</div>
<div class="page"><p/></div>
<div class="page"><p>Third <b>page</b></p><div class="ocr">scanned words</div></div>
</body></html>`;

describe("htmlToText with Tika's XHTML", () => {
  it("makes a page per <div class=page>, empty pages included", () => {
    const { text, pages } = htmlToText(TIKA_PDF, TIKA_XHTML_OPTIONS);
    expect(text).toBe("First page line two\n\nThird page\n\nscanned words");
    expect(pages.map((p) => p.number)).toEqual([1, 2, 3]);
    expect(pages[0]).toMatchObject({ start: 0, end: "First page line two".length });
    expect(pages[2]).toMatchObject({ start: text.indexOf("Third"), end: text.length });
    // The empty page is an empty span between its neighbours.
    expect(pages[1].start).toBe(pages[1].end);
    expect(pages[1].start).toBeGreaterThanOrEqual(pages[0].end);
    expect(pages[1].end).toBeLessThanOrEqual(pages[2].start);
  });

  it("collects metadata and drops the NUL title", () => {
    const { title, meta } = htmlToText(TIKA_PDF, TIKA_XHTML_OPTIONS);
    expect(title).toBe("");
    expect(meta["Content-Type"]).toBe("application/pdf");
    expect(meta["dc:creator"]).toBe("A, B");
  });

  it("lets the document's type choose the page markup, and gives following notes to the slide before", () => {
    const slides = `<html><head><meta name="Content-Type" content="application/vnd.ms-powerpoint"/></head><body>
      <div class="slide-content"><p>Slide one</p></div><p>Notes one</p>
      <div class="slide-content"><p>Slide two</p></div></body></html>`;
    const { text, pages } = htmlToText(slides, {
      ...TIKA_XHTML_OPTIONS,
      forDocument: (meta) => ({ pageClasses: meta["Content-Type"].includes("powerpoint") ? ["slide-content"] : [] }),
    });
    expect(pages).toEqual([
      { number: 1, start: 0, end: text.indexOf("\n\nSlide two") },
      { number: 2, start: text.indexOf("Slide two"), end: text.length },
    ]);
    expect(text.slice(pages[0].start, pages[0].end)).toBe("Slide one\n\nNotes one");
  });
});

describe("htmlToText on absurd nesting", () => {
  it("refuses markup nested deeper than MAX_HTML_DEPTH at once instead of parsing for minutes", () => {
    const depth = 100_000;
    const html = `<html><body>${"<div><span>".repeat(depth)}text${"</span></div>".repeat(depth)}</body></html>`;
    const started = performance.now();
    expect(() => htmlToText(html)).toThrow(InvalidInputError);
    expect(() => htmlToText(html)).toThrow(/nests elements more than 1,000 deep/);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("reads nesting well below the limit", () => {
    const html = `<html><body>${"<div>".repeat(400)}deep text${"</div>".repeat(400)}</body></html>`;
    expect(htmlToText(html).text).toBe("deep text");
  });
});
