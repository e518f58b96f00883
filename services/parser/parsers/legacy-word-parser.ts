// Word 97–2003 (.doc) through word-extractor, which reads the OLE2 compound file and the piece
// table in plain JavaScript. The binary format keeps heading styles in a stylesheet the library
// does not expose, so a .doc gives text in paragraphs without sections; Tika reads the same.
import WordExtractor from "word-extractor";
import { FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import type { ParsedContent } from "./parsed-content.ts";

export async function parseLegacyWord(bytes: Uint8Array, fileName: string): Promise<ParsedContent> {
  let body: string;
  try {
    const document = await new WordExtractor().extract(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    body = document.getBody();
  } catch (error) {
    throw new InvalidInputError(`corrupt or unreadable legacy Word document (.doc): ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  const text = body.replace(/\r\n?/g, "\n").replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
  if (text === "") {
    throw new FailedPreconditionError(`${fileName} has no text (only images?); the Tika parser (with OCR) reads text in images — configure TIKA_URL`);
  }
  return { text, pages: [], sections: [], metadata: {} };
}
