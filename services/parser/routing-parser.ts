// Picks the parser for each upload. The built-ins read text, Markdown, HTML, CSV/TSV and JSON
// whether or not Tika is configured: they are faster and keep the structure we need. With Tika
// configured it takes PDFs and Office files (its layout handling is better, and it can OCR scanned
// pages and embedded images) and every other format; without it the built-ins read those too. When Tika is configured but down, those documents fail with UnavailableError
// rather than quietly falling back to a weaker parse, so that they are retried once it is back.
// Whichever parser ran, an untyped failure is classified here once (see parse-failure.ts) and the
// text is held to the per-document limit.
import type { ParsedDocument } from "../../lib/domain.ts";
import { BUILTIN_FORMATS, TIKA_PREFERRED_FORMATS } from "./builtin-formats.ts";
import type { DocumentParser, ParseInput } from "./document-parser.ts";
import { detectFormat, type DocumentFormat } from "./format-detection.ts";
import { asParseFailure } from "./parse-failure.ts";
import { checkExtractedSize, DEFAULT_PARSE_LIMITS, type ParseLimits } from "./parse-limits.ts";

export interface RoutingParserOptions {
  builtin: DocumentParser;
  /** Absent when TIKA_URL is not set; formats only Tika reads then fail with the built-ins' explanation. */
  tika?: DocumentParser;
  limits?: Pick<ParseLimits, "maxDocumentChars">;
}

export { parsesFormat } from "./builtin-formats.ts";

export class RoutingParser implements DocumentParser {
  constructor(private readonly options: RoutingParserOptions) {}

  async parse(input: ParseInput): Promise<ParsedDocument> {
    let parsed: ParsedDocument;
    try {
      parsed = await this.parserFor(input).parse(input);
    } catch (error) {
      throw asParseFailure(error, input.fileName);
    }
    checkExtractedSize(parsed, input.fileName, this.options.limits ?? DEFAULT_PARSE_LIMITS);
    return parsed;
  }

  private parserFor(input: ParseInput): DocumentParser {
    const { builtin, tika } = this.options;
    if (!tika) return builtin;
    const { format } = detectFormat(input.bytes, input.fileName, input.declaredMimeType);
    return BUILTIN_FORMATS.has(format) && !TIKA_PREFERRED_FORMATS.has(format) ? builtin : tika;
  }
}
