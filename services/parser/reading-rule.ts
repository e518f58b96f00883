// One rule for what Quarry reads, derived from the parsers this deployment registers (the
// built-ins' BUILTIN_FORMATS always, every other known format with Tika), so a parser added there
// is accepted everywhere without a list kept by hand. It is applied by the parser to every
// submission (uploads and outside producers' events on documents.submitted alike), by the gateway
// before it accepts an upload (the parser's CheckReadable), and it is what `quarry ingest` walks a
// folder by and the console's file picker offers (the gateway's ListReadableFormats).
//
// A file is read when
//  1. its bytes carry a known signature (PDF, Office, images…), or its name has no extension or one
//     of a known format: an unknown extension (tool.exe, data.bin) is refused, text-like or not;
//  2. the format it is detected as (signature, then name, then content) is one the registered
//     parsers read;
//  3. a format read as text (text, Markdown, HTML, XML, SVG, CSV/TSV, JSON) looks like text: a
//     binary that merely decodes as text — mostly control bytes, or a few bytes in no encoding —
//     is refused with the reason.
import { FailedPreconditionError, InvalidInputError, type QuarryError } from "../../lib/errors.ts";
import { BUILTIN_FORMATS } from "./builtin-formats.ts";
import type { ParseInput } from "./document-parser.ts";
import { describeFormat, detectFormat, extensionOf, extensionsOf, formatOfFileName, isSigned, KNOWN_FORMATS, withArticle, type DetectedFormat, type DocumentFormat } from "./format-detection.ts";

export interface ReadableFormat {
  format: DocumentFormat;
  name: string;
  mimeType: string;
  extensions: string[];
}

/** How much of a file the rule reads: the gateway sends the parser no more than this. */
export const RULE_HEAD_BYTES = 64 * 1024;

const TEXT_FORMATS = new Set<DocumentFormat>(["text", "markdown", "html", "xml", "svg", "csv", "tsv", "json"]);

/** Whether Quarry parses a format: the built-ins' formats always, every other known one when Tika is configured. */
export function parsesFormat(format: DocumentFormat, tikaConfigured: boolean): boolean {
  return BUILTIN_FORMATS.has(format) || (tikaConfigured && format !== "binary");
}

/** The formats this deployment reads that a file name can announce (what a file picker offers). */
export function readableFormats(tikaConfigured: boolean): ReadableFormat[] {
  return KNOWN_FORMATS.filter((format) => parsesFormat(format, tikaConfigured))
    .map((format) => ({ ...describeFormat(format), extensions: extensionsOf(format) }))
    .filter((f) => f.extensions.length > 0);
}

/** Why a file is not read (the error to answer with), or its detected format when it is. */
export function applyReadingRule(input: ParseInput, tikaConfigured: boolean, size = input.bytes.length): { refusal: QuarryError } | { format: DetectedFormat } {
  if (size === 0) return { refusal: new InvalidInputError("the file is empty") };
  const head = input.bytes.subarray(0, RULE_HEAD_BYTES);
  const detected = detectFormat(head, input.fileName, input.declaredMimeType);
  const extension = extensionOf(input.fileName);
  if (!isSigned(detected.format) && extension && !formatOfFileName(input.fileName)) {
    return { refusal: new InvalidInputError(`${input.fileName}: Quarry does not read .${extension} files (${readsSummary(tikaConfigured)})`) };
  }
  if (detected.format === "binary") {
    return { refusal: new InvalidInputError(`${input.fileName} is not a document Quarry reads: it is binary data of no known format (${readsSummary(tikaConfigured)})`) };
  }
  if (!parsesFormat(detected.format, tikaConfigured)) {
    return {
      refusal: new FailedPreconditionError(
        `${input.fileName} is ${withArticle(detected.name)} (${detected.mimeType}); ${readsSummary(false)} — configure TIKA_URL to parse it with Apache Tika`,
      ),
    };
  }
  if (TEXT_FORMATS.has(detected.format)) {
    const problem = notText(head, size);
    if (problem) return { refusal: new InvalidInputError(`${input.fileName} is not text, though it is named or looks like ${withArticle(detected.name)}: ${problem}`) };
  }
  return { format: detected };
}

/** The rule as a check: throws the refusal. `size` is the whole file's when `input` holds only its head. */
export function checkReadable(input: ParseInput, tikaConfigured: boolean, size = input.bytes.length): DetectedFormat {
  const outcome = applyReadingRule(input, tikaConfigured, size);
  if ("refusal" in outcome) throw outcome.refusal;
  return outcome.format;
}

function readsSummary(tikaConfigured: boolean): string {
  const extensions = readableFormats(tikaConfigured).flatMap((f) => f.extensions.map((e) => `.${e}`));
  return `it reads ${extensions.join(" ")}`;
}

// Control characters real text never holds (C0 but tab, line feed, form feed, carriage return and
// escape, for ANSI colours in logs; DEL; C1, which bytes 0x80–0x9f become read as Latin-1, where
// Windows-1252 text has an occasional curly quote): random bytes are about a quarter of them.
const CONTROL = /[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f-\x9f]/g;
/** A text file may hold a stray control byte; one in ten characters is no text. */
const MAX_CONTROL_SHARE = 0.1;
/** Below this, bytes that are not UTF-8 cannot be told from noise (any legacy code page decodes them). */
const MIN_LEGACY_BYTES = 16;

/** Why bytes are not text, or undefined. Only the head is read; the parser's decoder checks the rest. */
function notText(head: Uint8Array, size: number): string | undefined {
  const utf16 = head[0] === 0xff && head[1] === 0xfe ? "utf-16le" : head[0] === 0xfe && head[1] === 0xff ? "utf-16be" : undefined;
  let text: string;
  if (utf16) {
    text = new TextDecoder(utf16).decode(head.subarray(2));
  } else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(head.subarray(0, head.length - trailingPartial(head, size)));
    } catch {
      if (size < MIN_LEGACY_BYTES) return `its ${size} byte(s) are not UTF-8 and too few to tell any other encoding by`;
      // A legacy code page decodes every byte; the control bytes still show.
      text = Buffer.from(head).toString("latin1");
    }
  }
  const chars = [...text];
  const controls = text.match(CONTROL)?.length ?? 0;
  if (chars.length > 0 && controls / chars.length > MAX_CONTROL_SHARE) {
    return `${controls} of its ${chars.length === size ? "" : "first "}${chars.length} characters are control codes`;
  }
  if (text.replace(CONTROL, "").trim() === "") return "it holds no readable characters";
  return undefined;
}

/** A multi-byte UTF-8 character cut by the head's end is not an error of the file. */
function trailingPartial(head: Uint8Array, size: number): number {
  if (head.length === size) return 0;
  for (let back = 1; back <= Math.min(3, head.length); back++) {
    const byte = head[head.length - back];
    if ((byte & 0xc0) === 0xc0) return back; // a lead byte: the character starts here
    if ((byte & 0xc0) !== 0x80) return 0;
  }
  return 0;
}
