// Picks the parser for each upload. The built-ins read text, Markdown, HTML, CSV/TSV and JSON
// whether or not Tika is configured: they are faster and keep the structure we need. With Tika
// configured it takes PDFs (its layout handling is better, and it can OCR scanned pages) and every
// other format. When Tika is configured but down, those documents fail with UnavailableError
// rather than quietly falling back to a weaker parse, so that they are retried once it is back.
import type { ParsedDocument } from "../../lib/domain.ts";
import { BUILTIN_FORMATS } from "./builtin-parser.ts";
import type { DocumentParser, ParseInput } from "./document-parser.ts";
import { detectFormat, type DocumentFormat } from "./format-detection.ts";

export interface RoutingParserOptions {
  builtin: DocumentParser;
  /** Absent when TIKA_URL is not set; formats only Tika reads then fail with the built-ins' explanation. */
  tika?: DocumentParser;
}

/** Whether Quarry parses a format: the built-ins' formats always, every other known one when Tika is configured. */
export function parsesFormat(format: DocumentFormat, tikaConfigured: boolean): boolean {
  return BUILTIN_FORMATS.has(format) || (tikaConfigured && format !== "binary");
}

export class RoutingParser implements DocumentParser {
  constructor(private readonly options: RoutingParserOptions) {}

  parse(input: ParseInput): Promise<ParsedDocument> {
    return this.parserFor(input).parse(input);
  }

  private parserFor(input: ParseInput): DocumentParser {
    const { builtin, tika } = this.options;
    if (!tika) return builtin;
    const { format } = detectFormat(input.bytes, input.fileName, input.declaredMimeType);
    return BUILTIN_FORMATS.has(format) && format !== "pdf" ? builtin : tika;
  }
}
