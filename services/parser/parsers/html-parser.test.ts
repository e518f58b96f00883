import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FIELD_GUIDE_HTML, FILING_HTML } from "../../../test/fixtures/fixture-texts.ts";
import { describeWithShared } from "../../../test/support/shared-material.ts";
import { parseHtml } from "./html-parser.ts";

describe("parseHtml", () => {
  it("reads a wiki page without its scripts, menus, navigation and footer categories", () => {
    const { text, sections, metadata } = parseHtml(FIELD_GUIDE_HTML);
    expect(metadata.title).toBe("Harbour seal - Coastal Field Guide");
    expect(text).toContain("The harbour seal is a true seal found along temperate and Arctic coasts of the northern hemisphere. It is grey");
    // The language menu, the scripts and the category links are page chrome.
    expect(text).not.toContain("Afrikaans");
    expect(text).not.toContain("PAGECONF");
    expect(text).not.toContain("Random page");
    expect(text).not.toContain("Hidden categories");
    expect(text).not.toMatch(/[ \t]{2,}/);
    expect(text).not.toMatch(/\n{3,}/);

    const feeding = sections.find((s) => s.path.at(-1) === "Feeding");
    expect(feeding?.path).toEqual(["Harbour seal", "Behaviour", "Feeding"]);
    expect(feeding?.level).toBe(3);
    expect(text.slice(feeding!.start, feeding!.end)).toMatch(/^Feeding\n\n/);
    const etymology = sections.find((s) => s.path.at(-1) === "Etymology")!;
    expect(etymology.path).toEqual(["Harbour seal", "Etymology"]);
    expect(text.slice(etymology.start, etymology.end)).toContain("The word seal comes from Old English");
  });

  it("reads an EDGAR-style filing, turning &#160; padding into plain spaces", () => {
    const { text } = parseHtml(FILING_HTML);
    expect(text).toContain("Northwind Ferries, Inc.");
    expect(text).toContain("Commission file number: 000-48213");
    expect(text).not.toContain("\u00a0");
  });

  it("breaks blocks into paragraphs and lines, tables into cells", () => {
    const html = `<html><head><title> T </title><style>p{}</style><script>var x</script></head><body>
      <nav><a href="/">Home</a></nav>
      <h1>Main</h1><p>First   <b>bold</b>
        para.</p><p>Second<br>line</p>
      <ul><li>one</li><li>two</li></ul>
      <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
      <h2>Sub</h2><pre>  keep   this
  spacing</pre><div hidden>secret</div>
    </body></html>`;
    const { text, sections, metadata } = parseHtml(html);
    expect(metadata.title).toBe("T");
    expect(text).toBe("Main\n\nFirst bold para.\n\nSecond\nline\n\n- one\n- two\n\nk | v\na | 1\n\nSub\n\n  keep   this\n  spacing");
    expect(sections).toEqual([
      { path: ["Main"], level: 1, start: 0, end: text.indexOf("\n\nSub") },
      { path: ["Main", "Sub"], level: 2, start: text.indexOf("Sub"), end: text.length },
    ]);
  });
});

describeWithShared("corpus/docs", "parseHtml on real-world pages", (docs) => {
  const readText = (name: string) => readFileSync(path.join(docs, name), "utf8");

  it("reads a Wikipedia page without its chrome", () => {
    const { text, sections, metadata } = parseHtml(readText("wiki_duck.html"));
    expect(metadata.title).toBe("Duck - Wikipedia");
    expect(text).toContain("Duck is the common name for numerous species of waterfowl in the family Anatidae.");
    expect(text).not.toContain("Afrikaans");
    expect(text).not.toContain("RLCONF");
    expect(text).not.toContain("Hidden categories");
    expect(sections.find((s) => s.path.at(-1) === "Feeding")?.path).toEqual(["Duck", "Behaviour", "Feeding"]);
  });

  it("reads an EDGAR filing", () => {
    const { text } = parseHtml(readText("example-10k-1p.html"));
    expect(text).toContain("Commission file number: 000-30653");
    expect(text).not.toContain("\u00a0");
  });
});
