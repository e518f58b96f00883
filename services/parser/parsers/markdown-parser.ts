// Markdown is already readable text, so it is kept exactly as written (offsets then point into
// what the author wrote); only the heading structure is recovered, for section paths. A full
// CommonMark parser would be overkill for finding headings: ATX and setext headings, fenced code
// and front matter are the only constructs that matter here, and each is one line rule.
import { sectionsFromHeadings, type Heading } from "../section-spans.ts";
import type { ParsedContent } from "./parsed-content.ts";

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
// Lines that cannot be (the start of) a setext heading's paragraph.
const NOT_PARAGRAPH = /^( {4,}|\t| {0,3}([>#|]|[-*+][ \t]|\d{1,9}[.)][ \t]|<))/;

export function parseMarkdown(text: string): ParsedContent {
  const headings: Heading[] = [];
  let fence: string | undefined;
  let paragraph: { start: number; lines: string[] } | undefined;
  let offset = 0;
  let inFrontMatter = text.startsWith("---\n");

  const lines = text.split("\n");
  lines.forEach((line, index) => {
    const lineStart = offset;
    offset += line.length + 1;

    if (inFrontMatter) {
      if (index > 0 && /^(---|\.\.\.)\s*$/.test(line)) inFrontMatter = false;
      return;
    }
    if (fence) {
      const closing = line.match(FENCE);
      if (closing && closing[1][0] === fence[0] && closing[1].length >= fence.length && line.trim() === closing[1]) fence = undefined;
      return;
    }
    const opening = line.match(FENCE);
    if (opening) {
      fence = opening[1];
      paragraph = undefined;
      return;
    }
    const atx = line.match(ATX_HEADING);
    if (atx) {
      const title = headingTitle(atx[2] ?? "");
      if (title) headings.push({ level: atx[1].length, title, start: lineStart + line.search(/#/) });
      paragraph = undefined;
      return;
    }
    const underline = line.match(SETEXT_UNDERLINE);
    if (underline && paragraph) {
      const title = headingTitle(paragraph.lines.join(" "));
      if (title) headings.push({ level: underline[1][0] === "=" ? 1 : 2, title, start: paragraph.start });
      paragraph = undefined;
      return;
    }
    if (line.trim() === "" || NOT_PARAGRAPH.test(line) || underline) {
      paragraph = undefined;
      return;
    }
    if (paragraph) paragraph.lines.push(line);
    else paragraph = { start: lineStart + (line.length - line.trimStart().length), lines: [line] };
  });

  return { text, pages: [], sections: sectionsFromHeadings(headings, text), metadata: {} };
}

/** The heading as a reader sees it: links reduced to their text, emphasis and code marks dropped. */
function headingTitle(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__|\*|`)/g, "")
    .replace(/\s+/g, " ")
    .trim();
}
