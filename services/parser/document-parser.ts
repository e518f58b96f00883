import type { ParsedDocument } from "../../lib/domain.ts";

export interface ParseInput {
  bytes: Uint8Array;
  fileName: string;
  /** What the uploader claimed; a hint only, the parser detects the real type. */
  declaredMimeType: string;
}

export interface DocumentParser {
  /**
   * Throws InvalidInputError for empty or undecodable input and FailedPreconditionError for a
   * format this parser cannot read (naming the format and who can).
   */
  parse(input: ParseInput): Promise<ParsedDocument>;
}
