// Documents made on the spot for tests and the fuzz bench: real PDFs (pdf-lib), Word documents
// (a minimal WordprocessingML package) and damaged copies of real files. Small and deterministic, so a failing case can be rebuilt from its seed.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { crc32 } from "node:zlib";
import { sharedCorpusFile } from "./shared-material.ts";
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
  return patchedBytes(readFileSync(sharedCorpusFile("multi_page.pdf")), 5, { fill: 0x29 });
}

/** A Word document with the given paragraphs: the three parts Word and Tika need, in a stored zip. */
export function generatedDocx(paragraphs: string[]): Uint8Array {
  const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${escape(p)}</w:t></w:r></w:p>`).join("");
  return storedZip([
    [
      "[Content_Types].xml",
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ],
    [
      "_rels/.rels",
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ],
    [
      "word/document.xml",
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">' +
        `<w:body>${body}</w:body></w:document>`,
    ],
  ]);
}

/** A zip archive with its entries stored uncompressed (method 0): local headers, then the central directory. */
function storedZip(entries: [name: string, content: string][]): Uint8Array {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of entries) {
    const nameBytes = Buffer.from(name, "utf8");
    const data = Buffer.from(content, "utf8");
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, directory, end]));
}
