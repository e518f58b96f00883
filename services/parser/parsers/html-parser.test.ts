import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseHtml } from "./html-parser.ts";

const docs = path.resolve(process.cwd(), "../shared/corpus/docs");
const readText = (name: string) => readFileSync(path.join(docs, name), "utf8");

describe("parseHtml", () => {
  it("reads a Wikipedia page without its scripts, menus and navigation", () => {
    const { text, sections, metadata } = parseHtml(readText("wiki_duck.html"));
    expect(metadata.title).toBe("Duck - Wikipedia");
    expect(text).toContain("Duck is the common name for numerous species of waterfowl in the family Anatidae.");
    // The language menu, the scripts and the category links are page chrome.
    expect(text).not.toContain("Afrikaans");
    expect(text).not.toContain("RLCONF");
    expect(text).not.toContain("Hidden categories");
    expect(text).not.toMatch(/[ \t]{2,}/);
    expect(text).not.toMatch(/\n{3,}/);

    const feeding = sections.find((s) => s.path.at(-1) === "Feeding");
    expect(feeding?.path).toEqual(["Duck", "Behaviour", "Feeding"]);
    expect(feeding?.level).toBe(3);
    expect(text.slice(feeding!.start, feeding!.end)).toMatch(/^Feeding\n\n/);
    const etymology = sections.find((s) => s.path.at(-1) === "Etymology")!;
    expect(text.slice(etymology.start, etymology.end)).toContain("The word duck comes from Old English");
  });

  it("reads an EDGAR filing, turning &#160; padding into plain spaces", () => {
    const { text } = parseHtml(readText("example-10k-1p.html"));
    expect(text).toContain("Galaxy Gaming, Inc.");
    expect(text).toContain("Commission file number: 000-30653");
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
