// An SVG drawing's words: its <title>, <desc> and <text> elements (with their <tspan>s), one line
// each, in document order. The markup, paths and styles are drawing instructions, not text, and
// indexed as plain text they made an SVG 23 chunks of XML (issue 25).
import { Parser } from "htmlparser2";
import { InvalidInputError } from "../../../lib/errors.ts";
import type { ParsedContent } from "./parsed-content.ts";

const TEXT_ELEMENTS = new Set(["title", "desc", "text"]);

export function parseSvg(markup: string): ParsedContent {
  const lines: string[] = [];
  let depth = 0; // how deep inside a text element the parser is
  let line = "";
  const parser = new Parser(
    {
      onopentag(name) {
        if (depth > 0 || TEXT_ELEMENTS.has(name.toLowerCase())) depth++;
      },
      ontext(text) {
        if (depth > 0) line += text;
      },
      onclosetag() {
        if (depth === 0) return;
        depth--;
        if (depth > 0) return;
        const words = line.replace(/\s+/g, " ").trim();
        if (words) lines.push(words);
        line = "";
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(markup);
  parser.end();
  if (lines.length === 0) throw new InvalidInputError("the SVG drawing holds no text (no <title>, <desc> or <text>): there is nothing to index");
  return { text: lines.join("\n"), pages: [], sections: [], metadata: {} };
}
