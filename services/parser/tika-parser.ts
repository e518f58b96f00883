// Parses anything Apache Tika understands (Office, OpenDocument, EPUB, RTF, scanned PDFs with
// OCR, ...). Tika's XHTML rather than its plain text is used because the markup keeps what plain
// text loses: page boundaries, headings and table cells.
import type { ParsedDocument } from "../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError } from "../../lib/errors.ts";
import type { DocumentParser, ParseInput } from "./document-parser.ts";
import { detectFormat } from "./format-detection.ts";
import { htmlToText, TIKA_XHTML_OPTIONS, type HtmlTextOptions } from "./html-text.ts";
import type { TikaClient } from "./tika-client.ts";

// Tika's markup differs by the type it parsed. Its PDF parser writes one <div class="page"> per
// page and its presentation parsers one <div class="slide-content"> per slide; its spreadsheet
// parser writes a <div> per sheet, which is no page to cite, so other formats get no pages. Its
// OpenDocument parser OCRs the file's thumbnail into a <div class="ocr"> ahead of the real text:
// a blurry copy of page one that only adds garbled words, so for ODF the OCR output is left out
// (which also drops OCR of images embedded in ODF files, a smaller loss).
function settingsFor(meta: Record<string, string>): Partial<HtmlTextOptions> {
  const mimeType = meta["Content-Type"] ?? "";
  const settings: Partial<HtmlTextOptions> = { pageClasses: [] };
  if (mimeType.startsWith("application/pdf")) settings.pageClasses = ["page"];
  else if (/presentation|powerpoint/.test(mimeType)) settings.pageClasses = ["slide-content"];
  if (mimeType.startsWith("application/vnd.oasis.opendocument")) settings.dropClassOrId = /^ocr$/;
  return settings;
}

export class TikaParser implements DocumentParser {
  constructor(private readonly client: TikaClient) {}

  async parse(input: ParseInput): Promise<ParsedDocument> {
    if (input.bytes.length === 0) throw new InvalidInputError("the file is empty");
    const detected = detectFormat(input.bytes, input.fileName, input.declaredMimeType);
    // No type is passed: Tika treats a request's Content-Type as an override of its own detection,
    // which reads far more formats than ours. The name goes along, for detection by extension.
    const xhtml = await this.client.parseToXhtml(input.bytes, input.fileName);

    const parsed = htmlToText(xhtml, { ...TIKA_XHTML_OPTIONS, forDocument: settingsFor });
    const mimeType = (parsed.meta["Content-Type"] ?? detected.mimeType).split(/[;,]/)[0].trim();
    if (parsed.text.trim() === "") {
      throw new FailedPreconditionError(`no text could be extracted from ${input.fileName} (image-only? OCR not available)`);
    }
    return {
      text: parsed.text,
      mimeType,
      parser: "tika",
      pages: parsed.pages,
      sections: parsed.sections,
      metadata: tikaMetadata(parsed.title, parsed.meta),
    };
  }
}

function tikaMetadata(title: string, meta: Record<string, string>): Record<string, string> {
  const metadata: Record<string, string> = {};
  const put = (key: string, value: string | undefined) => {
    if (value?.trim()) metadata[key] = value.trim();
  };
  put("title", title || meta["dc:title"]);
  put("author", meta["dc:creator"] ?? meta["meta:author"] ?? meta.Author);
  put("contentType", meta["Content-Type"]);
  put("pageCount", meta["xmpTPg:NPages"] ?? meta["meta:page-count"] ?? meta["meta:slide-count"]);
  put("language", meta["dc:language"]);
  put("encoding", meta["Content-Encoding"]);
  return metadata;
}
