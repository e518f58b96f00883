// Documents made on the spot for tests and the fuzz bench: real PDFs (pdf-lib) and damaged copies
// of real files. Small and deterministic, so a failing case can be rebuilt from its seed.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";

/** A PDF with `pages` pages of numbered lines of plain English, as a word processor would write it. */
export async function generatedPdf(pages = 4, linesPerPage = 30): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle("Generated test document");
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= pages; p++) {
    const page = doc.addPage([595, 842]);
    for (let line = 0; line < linesPerPage; line++) {
      page.drawText(`Page ${p}, line ${line + 1}: the quarry ships granite blocks to the harbour every morning.`, {
        x: 40,
        y: 800 - line * 24,
        size: 11,
        font,
      });
    }
  }
  return doc.save();
}

/**
 * A copy of bytes with `patches` runs of `length` bytes written over it (pseudo-random ones, or
 * all `fill`), at places the seed picks: the damage a bad disk or a broken upload does,
 * reproducible from the seed.
 */
export function patchedBytes(bytes: Uint8Array, seed: number, { patches = 4, length = 100, fill }: { patches?: number; length?: number; fill?: number } = {}): Uint8Array {
  const out = new Uint8Array(bytes);
  let x = (seed * 2654435761) >>> 0;
  const next = () => (x = (x * 1103515245 + 12345) >>> 0);
  for (let k = 0; k < patches; k++) {
    const at = next() % Math.max(1, out.length - length);
    for (let i = 0; i < length; i++) {
      const random = (next() >>> 16) & 0xff;
      if (at + i < out.length) out[at + i] = fill ?? random;
    }
  }
  return out;
}

/**
 * The corpus's multi_page.pdf with four runs of 100 ")" bytes: pdf.js throws "Illegal character:
 * 41" and, a moment later, rejects a promise nobody awaits, which ends a Node process by default.
 * (pdf-lib's own PDFs, simpler inside, never provoked the stray rejection in 450 tries.)
 */
export function strayRejectionPdf(): Uint8Array {
  return patchedBytes(readFileSync(resolve(process.cwd(), "../shared/corpus/docs/multi_page.pdf")), 5, { fill: 0x29 });
}
