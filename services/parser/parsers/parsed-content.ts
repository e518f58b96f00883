import type { ParsedDocument } from "../../../lib/domain.ts";

/** What a format parser extracts; BuiltinParser adds the MIME type, the parser name and the encoding. */
export type ParsedContent = Pick<ParsedDocument, "text" | "pages" | "sections" | "metadata">;
