// Damaged copies of real files from the shared corpus, for the tests that need one exact failure.
import { readFileSync } from "node:fs";
import { patchedBytes } from "../../lib/testing/generated-documents.ts";
import { sharedCorpusFile } from "./shared-material.ts";

/**
 * The corpus's multi_page.pdf with four runs of 100 ")" bytes: pdf.js throws "Illegal character:
 * 41" and, a moment later, rejects a promise nobody awaits, which ends a Node process by default.
 * (The PDFs this repository generates, simpler inside, never provoked the stray rejection in 450 tries.)
 */
export function strayRejectionPdf(): Uint8Array {
  return patchedBytes(readFileSync(sharedCorpusFile("multi_page.pdf")), 5, { fill: 0x29 });
}
