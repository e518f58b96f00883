// Picks the parser for each upload, once the file passes the rule for what Quarry reads
// (reading-rule.ts). The built-ins read text, Markdown, HTML, SVG's text, CSV/TSV and JSON whether or not Tika is configured: they are faster and keep the structure we need. With Tika
// configured it takes PDFs and Office files (its layout handling is better, and it can OCR scanned
// pages and embedded images) and every other format; without it the built-ins read those too. When Tika is configured but down, those documents fail with UnavailableError
// rather than quietly falling back to a weaker parse, so that they are retried once it is back.
// Whichever parser ran, an untyped failure is classified here once (see parse-failure.ts) and the
// text is held to the per-document limit.
import type { ParsedDocument } from "../../lib/domain.ts";
import { BUILTIN_FORMATS, TIKA_PREFERRED_FORMATS } from "./builtin-formats.ts";
import type { DocumentParser, ParseInput } from "./document-parser.ts";
import { detectFormat, type DetectedFormat } from "./format-detection.ts";
import { asParseFailure } from "./parse-failure.ts";
import { checkReadable, readableFormats, type ReadableFormat } from "./reading-rule.ts";
import { checkExtractedSize, DEFAULT_PARSE_LIMITS, type ParseLimits } from "./parse-limits.ts";

export interface RoutingParserOptions {
  builtin: DocumentParser;
  /** Absent when TIKA_URL is not set; formats only Tika reads then fail with the built-ins' explanation. */
  tika?: DocumentParser;
  limits?: Pick<ParseLimits, "maxDocumentChars">;
}

export class RoutingParser implements DocumentParser {
  constructor(private readonly options: RoutingParserOptions) {}

  /** Whether a file is read here, by the one rule (reading-rule.ts); throws the refusal. */
  check(input: ParseInput, size = input.bytes.length): DetectedFormat {
    return checkReadable(input, this.options.tika !== undefined, size);
  }

  readableFormats(): ReadableFormat[] {
    return readableFormats(this.options.tika !== undefined);
  }

  async parse(input: ParseInput): Promise<ParsedDocument> {
    this.check(input);
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
