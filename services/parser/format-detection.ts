// Decides what an upload really is. Magic bytes win over the file name, and the name wins over the
// MIME type the uploader declared (browsers send application/octet-stream or guess from the name).
// Only the formats the parsers route on are told apart; everything else Tika detects for itself.

export type DocumentFormat =
  | "pdf"
  | "docx" | "pptx" | "xlsx"
  | "odt" | "ods" | "odp" | "epub" | "zip"
  | "doc" | "xls" | "ppt" | "msg" | "ole2"
  | "rtf"
  | "png" | "jpeg" | "gif" | "tiff" | "bmp" | "webp"
  | "html" | "xml" | "svg" | "markdown" | "csv" | "tsv" | "json" | "text"
  | "binary";

export interface DetectedFormat {
  format: DocumentFormat;
  mimeType: string;
  /** What a person calls it, e.g. "Word document". */
  name: string;
}

const FORMATS: Record<DocumentFormat, Omit<DetectedFormat, "format">> = {
  pdf: { mimeType: "application/pdf", name: "PDF document" },
  docx: { mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", name: "Word document" },
  pptx: { mimeType: "application/vnd.openxmlformats-officedocument.presentationml.presentation", name: "PowerPoint presentation" },
  xlsx: { mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", name: "Excel spreadsheet" },
  odt: { mimeType: "application/vnd.oasis.opendocument.text", name: "OpenDocument text" },
  ods: { mimeType: "application/vnd.oasis.opendocument.spreadsheet", name: "OpenDocument spreadsheet" },
  odp: { mimeType: "application/vnd.oasis.opendocument.presentation", name: "OpenDocument presentation" },
  epub: { mimeType: "application/epub+zip", name: "EPUB e-book" },
  zip: { mimeType: "application/zip", name: "ZIP archive" },
  doc: { mimeType: "application/msword", name: "legacy Word document (.doc)" },
  xls: { mimeType: "application/vnd.ms-excel", name: "legacy Excel workbook (.xls)" },
  ppt: { mimeType: "application/vnd.ms-powerpoint", name: "legacy PowerPoint presentation (.ppt)" },
  msg: { mimeType: "application/vnd.ms-outlook", name: "Outlook message" },
  ole2: { mimeType: "application/x-tika-msoffice", name: "Microsoft Office (OLE2) document" },
  rtf: { mimeType: "application/rtf", name: "RTF document" },
  png: { mimeType: "image/png", name: "PNG image" },
  jpeg: { mimeType: "image/jpeg", name: "JPEG image" },
  gif: { mimeType: "image/gif", name: "GIF image" },
  tiff: { mimeType: "image/tiff", name: "TIFF image" },
  bmp: { mimeType: "image/bmp", name: "BMP image" },
  webp: { mimeType: "image/webp", name: "WebP image" },
  html: { mimeType: "text/html", name: "HTML page" },
  xml: { mimeType: "application/xml", name: "XML document" },
  svg: { mimeType: "image/svg+xml", name: "SVG drawing" },
  markdown: { mimeType: "text/markdown", name: "Markdown document" },
  csv: { mimeType: "text/csv", name: "CSV table" },
  tsv: { mimeType: "text/tab-separated-values", name: "TSV table" },
  json: { mimeType: "application/json", name: "JSON document" },
  text: { mimeType: "text/plain", name: "plain text" },
  binary: { mimeType: "application/octet-stream", name: "unrecognised binary file" },
};

const BY_EXTENSION: Record<string, DocumentFormat> = {
  pdf: "pdf", docx: "docx", docm: "docx", pptx: "pptx", pptm: "pptx", xlsx: "xlsx", xlsm: "xlsx",
  odt: "odt", ods: "ods", odp: "odp", epub: "epub", zip: "zip",
  doc: "doc", xls: "xls", ppt: "ppt", msg: "msg", rtf: "rtf",
  png: "png", jpg: "jpeg", jpeg: "jpeg", gif: "gif", tif: "tiff", tiff: "tiff", bmp: "bmp", webp: "webp",
  html: "html", htm: "html", xhtml: "html", xml: "xml", svg: "svg",
  md: "markdown", markdown: "markdown", mdx: "markdown",
  csv: "csv", tsv: "tsv", tab: "tsv", json: "json",
  txt: "text", text: "text", log: "text",
};

const BY_MIME: Record<string, DocumentFormat> = Object.fromEntries(
  (Object.entries(FORMATS) as [DocumentFormat, { mimeType: string }][])
    .filter(([format]) => format !== "binary")
    .map(([format, { mimeType }]) => [mimeType, format]),
);
Object.assign(BY_MIME, {
  "application/xhtml+xml": "html", "text/xml": "xml", "text/x-markdown": "markdown", "application/csv": "csv",
  "text/tsv": "tsv", "text/json": "json", "application/x-pdf": "pdf", "text/rtf": "rtf",
});

const ZIP_DOCUMENTS: Record<string, DocumentFormat> = {
  "application/vnd.oasis.opendocument.text": "odt",
  "application/vnd.oasis.opendocument.spreadsheet": "ods",
  "application/vnd.oasis.opendocument.presentation": "odp",
  "application/epub+zip": "epub",
};

/** The format a file's name says it is; undefined for an extension the parsers do not know (.exe, none). */
export function formatOfFileName(fileName: string): DocumentFormat | undefined {
  return BY_EXTENSION[extensionOf(fileName)];
}

/** Every format told apart here, "binary" (what is none of them) aside. */
export const KNOWN_FORMATS = (Object.keys(FORMATS) as DocumentFormat[]).filter((f) => f !== "binary");

/** The extensions a format is recognised by, without the dot. */
export function extensionsOf(format: DocumentFormat): string[] {
  return Object.entries(BY_EXTENSION)
    .filter(([, f]) => f === format)
    .map(([extension]) => extension);
}

/** Whether the bytes carry a format's signature, which then decides the format whatever the name says. */
export function isSigned(format: DocumentFormat): boolean {
  return SIGNED_FORMATS.has(format);
}

export function describeFormat(format: DocumentFormat): DetectedFormat {
  return { format, ...FORMATS[format] };
}

// Formats with a signature: a name or declared type claiming one of these is wrong when the bytes lack it.
const SIGNED_FORMATS = new Set<DocumentFormat>([
  "pdf", "docx", "pptx", "xlsx", "odt", "ods", "odp", "epub", "zip", "doc", "xls", "ppt", "msg", "ole2", "rtf",
  "png", "jpeg", "gif", "tiff", "bmp", "webp",
]);

export function detectFormat(bytes: Uint8Array, fileName: string, declaredMimeType: string): DetectedFormat {
  const plausible = (format: DocumentFormat | undefined) => (format && !SIGNED_FORMATS.has(format) ? format : undefined);
  const fromName = BY_EXTENSION[extensionOf(fileName)];
  const declared = BY_MIME[declaredMimeType.split(";")[0].trim().toLowerCase()];
  return describeFormat(fromMagic(bytes, fromName) ?? plausible(fromName) ?? plausible(declared) ?? fromContent(bytes));
}

/** "a Word document", "an Excel spreadsheet". */
export function withArticle(name: string): string {
  return /^([aeiou]|RTF|HTML|XML)/i.test(name) ? `an ${name}` : `a ${name}`;
}

export function extensionOf(fileName: string): string {
  // A document's name may be a relative path (folder ingest): only its last part has the extension.
  const name = fileName.slice(fileName.replaceAll("\\", "/").lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase();
}

function startsWith(bytes: Uint8Array, signature: number[], offset = 0): boolean {
  return signature.every((b, i) => bytes[offset + i] === b);
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, Math.max(0, Math.min(end, bytes.length) - start)).toString("latin1");
}

function fromMagic(bytes: Uint8Array, fromName: DocumentFormat | undefined): DocumentFormat | undefined {
  if (ascii(bytes, 0, 5) === "%PDF-") return "pdf";
  // PDF readers accept the header anywhere in the first KiB, after junk some generators prepend;
  // trusted only for a .pdf name, since a text file may well mention "%PDF-".
  if (fromName === "pdf" && ascii(bytes, 0, 1024).includes("%PDF-")) return "pdf";
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) return zipFormat(bytes);
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) {
    // Telling .doc/.xls/.ppt apart needs the OLE2 directory; the name is right often enough, and Tika reads the directory anyway.
    return fromName === "doc" || fromName === "xls" || fromName === "ppt" || fromName === "msg" ? fromName : "ole2";
  }
  if (ascii(bytes, 0, 5) === "{\\rtf") return "rtf";
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg";
  if (ascii(bytes, 0, 6) === "GIF87a" || ascii(bytes, 0, 6) === "GIF89a") return "gif";
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return "tiff";
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 12) === "WEBP") return "webp";
  if (ascii(bytes, 0, 2) === "BM" && fromName === "bmp") return "bmp";
  return undefined;
}

function fromContent(bytes: Uint8Array): DocumentFormat {
  const head = ascii(bytes, 0, 4096);
  if (head.slice(0, 1024).includes("\0") && !isUtf16Bom(bytes)) return "binary";
  const start = head.replace(/^(\xef\xbb\xbf|\xff\xfe|\xfe\xff)/, "").trimStart().toLowerCase();
  if (/^(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/.test(start)) return "html";
  if (start.startsWith("<svg") || (start.startsWith("<?xml") && /<svg[\s>]/.test(start) && !/<html[\s>]/.test(start))) return "svg";
  if (start.startsWith("<?xml")) return /<html[\s>]/.test(start) ? "html" : "xml";
  return "text";
}

function isUtf16Bom(bytes: Uint8Array): boolean {
  return startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff]);
}

/**
 * OOXML, ODF and EPUB are all zip files; which one it is shows in the entry names (word/, ppt/,
 * xl/) or in the stored "mimetype" entry. Hand-written rather than a zip library because only the
 * names are needed: the central directory lists them without inflating anything.
 */
function zipFormat(bytes: Uint8Array): DocumentFormat {
  const mimetype = storedMimetypeEntry(bytes);
  if (mimetype && ZIP_DOCUMENTS[mimetype]) return ZIP_DOCUMENTS[mimetype];
  const names = zipEntryNames(bytes);
  if (names.some((n) => n.startsWith("word/"))) return "docx";
  if (names.some((n) => n.startsWith("ppt/"))) return "pptx";
  if (names.some((n) => n.startsWith("xl/"))) return "xlsx";
  if (names.includes("META-INF/container.xml")) return "epub";
  return "zip";
}

/** ODF and EPUB put an uncompressed "mimetype" entry first so that it can be read at a fixed place. */
function storedMimetypeEntry(bytes: Uint8Array): string | undefined {
  if (bytes.length < 30) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const method = view.getUint16(8, true);
  const size = view.getUint32(18, true);
  const nameLength = view.getUint16(26, true);
  const extraLength = view.getUint16(28, true);
  if (method !== 0 || ascii(bytes, 30, 30 + nameLength) !== "mimetype" || size > 200) return undefined;
  const start = 30 + nameLength + extraLength;
  return ascii(bytes, start, start + size).trim();
}

function zipEntryNames(bytes: Uint8Array): string[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end-of-central-directory record sits in the last 22 bytes plus up to 64 KiB of comment.
  for (let eocd = bytes.length - 22; eocd >= Math.max(0, bytes.length - 22 - 0xffff); eocd--) {
    if (view.getUint32(eocd, true) !== 0x06054b50) continue;
    const count = view.getUint16(eocd + 10, true);
    let at = view.getUint32(eocd + 16, true);
    const names: string[] = [];
    for (let i = 0; i < count && at + 46 <= bytes.length && view.getUint32(at, true) === 0x02014b50; i++) {
      const nameLength = view.getUint16(at + 28, true);
      names.push(Buffer.from(bytes.buffer, bytes.byteOffset + at + 46, Math.min(nameLength, bytes.length - at - 46)).toString("utf8"));
      at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    }
    return names;
  }
  return localEntryNames(bytes);
}

/** A truncated zip has no central directory; its local headers still name the entries they hold. */
function localEntryNames(bytes: Uint8Array): string[] {
  const names: string[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at + 30 <= bytes.length && names.length < 200; ) {
    if (view.getUint32(at, true) !== 0x04034b50) break;
    const flags = view.getUint16(at + 6, true);
    const size = view.getUint32(at + 18, true);
    const nameLength = view.getUint16(at + 26, true);
    names.push(ascii(bytes, at + 30, at + 30 + nameLength));
    // With a data descriptor (flag bit 3) the size is not known up front, so the walk stops here.
    if (flags & 0x08) break;
    at += 30 + nameLength + view.getUint16(at + 28, true) + size;
  }
  return names;
}
