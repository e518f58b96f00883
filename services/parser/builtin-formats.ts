// Which formats the built-in parsers read, apart from the parsers themselves: the rule for what
// Quarry reads (reading-rule.ts) and the routing parser ask this without loading pdf.js,
// officeparser and the rest.
import type { DocumentFormat } from "./format-detection.ts";

export const TEXT_FORMATS = ["text", "markdown", "html", "svg", "csv", "tsv", "json"] as const satisfies readonly DocumentFormat[];
export type TextFormat = (typeof TEXT_FORMATS)[number];

export const OFFICE_FORMATS = ["docx", "xlsx", "pptx", "odt", "ods", "odp", "epub"] as const satisfies readonly DocumentFormat[];
export type OfficeFormat = (typeof OFFICE_FORMATS)[number];

/** The formats BuiltinParser reads: what Quarry parses with no TIKA_URL. */
export const BUILTIN_FORMATS: ReadonlySet<DocumentFormat> = new Set<DocumentFormat>([...TEXT_FORMATS, "pdf", ...OFFICE_FORMATS, "doc"]);

/**
 * The built-in formats Tika reads better when it is configured (PDF layout, and OCR of the images
 * in a scan or an Office file); the routing parser sends these to Tika then.
 */
export const TIKA_PREFERRED_FORMATS: ReadonlySet<DocumentFormat> = new Set<DocumentFormat>(["pdf", ...OFFICE_FORMATS, "doc"]);

export const isOfficeFormat = (format: DocumentFormat): format is OfficeFormat => (OFFICE_FORMATS as readonly DocumentFormat[]).includes(format);
