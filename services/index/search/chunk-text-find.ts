// Finding the chunks whose text contains a given text, for "is it in the knowledge base at all?"
// (the retrieval debugger). Every engine reads its chunks in pages and hands them here, so what
// counts as a match is decided once: the text as given, or — since people paste what they remember
// from a PDF, with other line breaks, full-width letters or other case — both texts normalised
// (NFKC, lower case, whitespace removed; removing it rather than collapsing it also lets a Chinese
// phrase match across a line break) and without Markdown's inline marks and list bullets, as an
// answer quotes it (lib/inline-markup.ts), so a phrase copied from an answer is found.
import type { Chunk, ChunkFind, FoundChunk, ScannedChunk } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { textWithoutInlineMarkup } from "../../../lib/inline-markup.ts";

// The engines import these from here; they live in lib/domain.ts because the answer service reads them too.
export type { ChunkFind, FoundChunk, ScannedChunk };

export interface ChunkFindRequest {
  knowledgeBaseIds: string[];
  text: string;
  /** Most chunks returned (the count goes on past it). */
  limit: number;
  /** Only these documents' chunks, when any are named. */
  documentIds: string[];
  /** Most chunks read before the scan stops (complete: false). */
  maxScan: number;
}

/** Most characters of a text to look for: a find is for a phrase or a passage, not a document. */
export const MAX_FIND_TEXT_CHARS = 2_000;

const NON_ASCII = /[^\x00-\x7f]/;

export function normaliseForFind(text: string): string {
  // NFKC leaves ASCII as it is; skipping it for ASCII text halves a scan of English chunks.
  return textWithoutInlineMarkup(NON_ASCII.test(text) ? text.normalize("NFKC") : text).toLowerCase().replace(/\s+/gu, "");
}

export function validateChunkFind(request: ChunkFindRequest): void {
  if (request.knowledgeBaseIds.length === 0) throw new InvalidInputError("finding chunks needs at least one knowledge base");
  if (!normaliseForFind(request.text)) throw new InvalidInputError("the text to find is empty");
  if (request.text.length > MAX_FIND_TEXT_CHARS) throw new InvalidInputError(`the text to find is ${request.text.length} characters long; the limit is ${MAX_FIND_TEXT_CHARS}`);
  if (!Number.isInteger(request.limit) || request.limit < 1) throw new InvalidInputError(`limit must be a positive integer, got ${request.limit}`);
}

/** Reads the pages until maxScan chunks, keeping those that contain the text. */
export async function findInPages(pages: AsyncIterable<ScannedChunk[]> | Iterable<ScannedChunk[]>, request: ChunkFindRequest): Promise<ChunkFind> {
  const wanted = normaliseForFind(request.text);
  const asGiven = request.text.trim();
  const found: FoundChunk[] = [];
  let matched = 0;
  let scanned = 0;
  for await (const page of pages) {
    for (const scannedChunk of page) {
      if (scanned >= request.maxScan) return { chunks: found, matched, scanned, complete: false };
      scanned++;
      const text = scannedChunk.chunk.text;
      const exact = text.includes(asGiven);
      if (!exact && !normaliseForFind(text).includes(wanted)) continue;
      matched++;
      if (found.length < request.limit) found.push({ ...scannedChunk, exact });
    }
  }
  return { chunks: found, matched, scanned, complete: true };
}
