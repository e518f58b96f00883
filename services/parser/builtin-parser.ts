// The parsers that need no external service: text, Markdown, HTML, SVG's text, tables, JSON, PDFs
// with a text layer, Word/Excel/PowerPoint, OpenDocument, EPUB and legacy .doc. Everything else
// (RTF, images, legacy .xls/.ppt, scanned pages) is named and sent to Tika.
import type { ParsedDocument } from "../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import type { DocumentParser, ParseInput } from "./document-parser.ts";
import { isOfficeFormat, type TextFormat } from "./builtin-formats.ts";
import { decodeText } from "./encoding.ts";
import { detectFormat, withArticle, type DetectedFormat } from "./format-detection.ts";
import { parseCsv } from "./parsers/csv-parser.ts";
import { parseHtml } from "./parsers/html-parser.ts";
import { parseJson } from "./parsers/json-parser.ts";
import { parseMarkdown } from "./parsers/markdown-parser.ts";
import type { ParsedContent } from "./parsers/parsed-content.ts";
import { parsePdf } from "./parsers/pdf-parser.ts";
import { parsePlainText } from "./parsers/plain-text-parser.ts";
import { parseSvg } from "./parsers/svg-parser.ts";

const TEXT_PARSERS: Record<TextFormat, { name: string; parse: (text: string) => ParsedContent }> = {
  text: { name: "builtin:text", parse: parsePlainText },
  markdown: { name: "builtin:markdown", parse: parseMarkdown },
  html: { name: "builtin:html", parse: parseHtml },
  svg: { name: "builtin:svg", parse: parseSvg },
  csv: { name: "builtin:csv", parse: (text) => parseCsv(text, { tabSeparated: false }) },
  tsv: { name: "builtin:tsv", parse: (text) => parseCsv(text, { tabSeparated: true }) },
  json: { name: "builtin:json", parse: parseJson },
};

export class BuiltinParser implements DocumentParser {
  async parse(input: ParseInput): Promise<ParsedDocument> {
    if (input.bytes.length === 0) throw new InvalidInputError("the file is empty");
    const detected = detectFormat(input.bytes, input.fileName, input.declaredMimeType);

    if (detected.format === "pdf") {
      const content = await parsePdf(input.bytes, input.fileName);
      return { ...content, mimeType: detected.mimeType, parser: "builtin:pdf" };
    }
    // The Office readers are loaded with the first Office file: officeparser is large, and a
    // parser thread (under its heap limit) that only ever reads text need not hold it.
    if (isOfficeFormat(detected.format)) {
      const { parseOfficeDocument } = await import("./parsers/office-parser.ts");
      const content = await parseOfficeDocument(input.bytes, input.fileName, detected.format, detected.name);
      return { ...content, mimeType: detected.mimeType, parser: `builtin:${detected.format}` };
    }
    if (detected.format === "doc") {
      const { parseLegacyWord } = await import("./parsers/legacy-word-parser.ts");
      const content = await parseLegacyWord(input.bytes, input.fileName);
      return { ...content, mimeType: detected.mimeType, parser: "builtin:doc" };
    }
    if (detected.format in TEXT_PARSERS) {
      const { name, parse } = TEXT_PARSERS[detected.format as TextFormat];
      const { text, encoding } = decodeText(input.bytes);
      const content = parse(text);
      return { ...content, metadata: { ...content.metadata, encoding }, mimeType: detected.mimeType, parser: name };
    }
    throw unsupported(input.fileName, detected);
  }
}

export function unsupported(fileName: string, detected: DetectedFormat): FailedPreconditionError {
  return new FailedPreconditionError(
    `${fileName} is ${withArticle(detected.name)} (${detected.mimeType}); the built-in parsers read text, Markdown, HTML, ` +
      "SVG, CSV/TSV, JSON, PDF, Word (.docx, .doc), Excel (.xlsx), PowerPoint (.pptx), OpenDocument and EPUB — " +
      "configure TIKA_URL to parse it with Apache Tika",
  );
}
