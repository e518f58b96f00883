// Per-document limits on what parsing may produce and spend. A file under the upload limit can
// still expand into far more text than anyone can search usefully (a compressed PDF, a JSON file
// that flattens into long key paths), or make a parser loop or allocate without end; each of these
// fails the one document with a reason that names the limit and the variable that sets it.
import type { ParsedDocument } from "../../lib/domain.ts";
import { TooLargeError } from "../../lib/errors.ts";

export interface ParseLimits {
  /** Most characters of text one document may yield (QUARRY_MAX_DOCUMENT_CHARS). */
  maxDocumentChars: number;
  /** Longest one parse may take (QUARRY_PARSE_TIMEOUT_MS). */
  timeoutMs: number;
  /** Heap one parsing thread may use (QUARRY_PARSE_MEMORY_MB). */
  memoryMb: number;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = { maxDocumentChars: 20_000_000, timeoutMs: 60_000, memoryMb: 1024 };

export function checkExtractedSize(parsed: Pick<ParsedDocument, "text">, fileName: string, limits: Pick<ParseLimits, "maxDocumentChars">): void {
  if (parsed.text.length > limits.maxDocumentChars) {
    throw new TooLargeError(
      `${fileName} yields ${parsed.text.length.toLocaleString("en-US")} characters of text, more than the limit of ` +
        `${limits.maxDocumentChars.toLocaleString("en-US")} per document (QUARRY_MAX_DOCUMENT_CHARS)`,
    );
  }
}
