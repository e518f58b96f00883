// Documents written by the libraries real tools use, for the test fixtures (test/fixtures/), the fuzz
// suite and `quarry bench fuzz`: PDFs through pdfkit, Word documents through docx, and damaged copies
// of any bytes. Dates are fixed, so the same call gives the same bytes in every process: a fixture is
// cached by its source, and a fuzz failure is rebuilt from its seed. The libraries are loaded on first
// use, so importing this module costs nothing.
import type { Document as DocxDocument } from "docx";
import { unzipSync, zipSync } from "fflate";

export const FIXED_DATE = new Date("2025-01-15T09:00:00Z");

/** The bytes of a pdfkit document (A4, 56 pt margins, pages added by `draw`), dated FIXED_DATE. */
export async function pdfkitDocument(draw: (doc: PDFKit.PDFDocument) => void, info: PDFKit.DocumentInfo = {}): Promise<Buffer> {
  const { default: PDFDocument } = await import("pdfkit");
  const doc = new PDFDocument({ size: "A4", margin: 56, autoFirstPage: false, info: { CreationDate: FIXED_DATE, ModDate: FIXED_DATE, ...info } });
  const parts: Buffer[] = [];
  doc.on("data", (part: Buffer) => parts.push(part));
  const done = new Promise<void>((resolve, reject) => {
    doc.on("end", resolve);
    doc.on("error", reject);
  });
  draw(doc);
  doc.end();
  await done;
  return Buffer.concat(parts);
}

/**
 * The bytes of a docx Document. docx stamps its core properties and every zip entry with the time of
 * the call; both are set to FIXED_DATE here (the parts themselves are docx's, unchanged).
 */
export async function docxBytes(document: DocxDocument): Promise<Buffer> {
  const { Packer } = await import("docx");
  const entries = unzipSync(new Uint8Array(await Packer.toBuffer(document)));
  const core = entries["docProps/core.xml"];
  if (core) {
    const stamp = FIXED_DATE.toISOString().replace(/\.\d+Z$/, "Z");
    const text = new TextDecoder().decode(core).replace(/(<dcterms:(?:created|modified)\b[^>]*>)[^<]*/g, `$1${stamp}`);
    entries["docProps/core.xml"] = new TextEncoder().encode(text);
  }
  return Buffer.from(zipSync(entries, { mtime: FIXED_DATE }));
}

/** A PDF with `pages` pages of numbered lines of plain English, as a word processor would write it. */
export function generatedPdf(pages = 4, linesPerPage = 30): Promise<Buffer> {
  return pdfkitDocument(
    (doc) => {
      for (let p = 1; p <= pages; p++) {
        doc.addPage().font("Helvetica").fontSize(11);
        for (let line = 0; line < linesPerPage; line++) {
          doc.text(`Page ${p}, line ${line + 1}: the quarry ships granite blocks to the harbour every morning.`, 40, 42 + line * 24, { lineBreak: false });
        }
      }
    },
    { Title: "Generated test document" },
  );
}

/** A Word document with the given paragraphs. */
export async function generatedDocx(paragraphs: string[]): Promise<Buffer> {
  const { Document, Paragraph } = await import("docx");
  return docxBytes(new Document({ sections: [{ children: paragraphs.map((text) => new Paragraph(text)) }] }));
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
