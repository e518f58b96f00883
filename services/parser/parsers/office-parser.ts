// Word, Excel, PowerPoint, OpenDocument and EPUB without Java, through officeparser: one library
// that reads all seven into one tree of headings, paragraphs, lists, tables, sheets and slides
// (measured against mammoth, exceljs and epub2 on the fixtures and ../shared's corpus: it is the
// only one that keeps slides and ODF at all, and its heading levels match mammoth's on DOCX — see
// docs/PARSING.md). The tree becomes Quarry's text and spans: headings → sections, each sheet → a
// section of labelled rows (labelled-rows.ts, so every table chunk carries its header), each
// slide → a page. Scanned images are not read here: with TIKA_URL set, Tika OCRs them.
import { parseOffice, type OfficeContentNode, type OfficeParserConfig } from "officeparser";
import type { PageSpan } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import type { OfficeFormat } from "../builtin-formats.ts";
import { sectionsFromHeadings, type Heading } from "../section-spans.ts";
import { labelledRows, oneLine } from "./labelled-rows.ts";
import type { ParsedContent } from "./parsed-content.ts";

const CONFIG: OfficeParserConfig = {
  // Running heads, masters and review comments repeat or annotate; they are not the document's text.
  ignoreHeadersAndFooters: true,
  ignoreSlideMasters: true,
  ignoreComments: true,
  ignoreNotes: false,
  extractAttachments: false,
  ocr: false,
  includeRawContent: false,
};

// Nodes that hold no text of their own worth indexing (a break is a line break inside a block).
const SKIPPED = new Set(["image", "chart", "drawing", "comment", "header", "footer", "slideMaster", "embed"]);

export async function parseOfficeDocument(bytes: Uint8Array, fileName: string, format: OfficeFormat, formatName: string): Promise<ParsedContent> {
  let ast: Awaited<ReturnType<typeof parseOffice>>;
  try {
    ast = await parseOffice(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { ...CONFIG, fileType: format });
  } catch (error) {
    const code = (error as { officeIssue?: { code?: string } }).officeIssue?.code ?? "";
    if (code.startsWith("PASSWORD") || code === "DOCUMENT_DECRYPTION_FAILED") {
      throw new InvalidInputError(`${fileName} is a password-protected ${formatName}; upload it without the password`, { cause: error });
    }
    throw new InvalidInputError(`corrupt or unreadable ${formatName}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }

  const out = new StructuredText();
  for (const node of ast.content) out.add(node);
  if (out.text.trim() === "") {
    throw new FailedPreconditionError(
      `${fileName} has no text (only images or drawings?); the Tika parser (with OCR) reads text in images — configure TIKA_URL`,
    );
  }
  const metadata: Record<string, string> = {};
  for (const key of ["title", "author", "subject"] as const) {
    const value = ast.metadata[key];
    if (typeof value === "string" && value.trim()) metadata[key] = value.trim();
  }
  if (out.pages.length > 0) metadata.pageCount = String(out.pages.length);
  if (out.sheets > 0) metadata.sheetCount = String(out.sheets);
  return { text: out.text, pages: out.pages, sections: sectionsFromHeadings(out.headings, out.text), metadata };
}

/** Builds the text block by block, remembering where each heading and each slide starts. */
class StructuredText {
  text = "";
  readonly headings: Heading[] = [];
  readonly pages: PageSpan[] = [];
  sheets = 0;
  private readonly blockStarts: number[] = [];

  add(node: OfficeContentNode): void {
    if (SKIPPED.has(node.type)) return;
    switch (node.type) {
      case "heading": {
        const title = oneLine(textOf(node));
        if (title) this.headings.push({ level: node.metadata?.level ?? 1, title, start: this.block(title) });
        return;
      }
      case "break":
        return;
      case "paragraph":
      case "text":
      case "code":
        this.block(tidy(textOf(node)));
        return;
      case "list":
        // A list item is its own line, not a paragraph: the items of one list stay together.
        this.block(tidy(textOf(node)), "\n");
        return;
      case "table":
        this.table(node.children ?? []);
        return;
      case "sheet": {
        this.sheets++;
        const name = oneLine(node.metadata?.sheetName ?? "") || `Sheet ${this.sheets}`;
        this.headings.push({ level: 1, title: name, start: this.block(name) });
        this.table(node.children ?? []);
        return;
      }
      case "slide":
      case "page": {
        const mark = this.blockStarts.length;
        this.addAll(node.children);
        this.addAll(node.notes);
        const start = this.blockStarts[mark] ?? this.text.length;
        const number = (node.type === "slide" ? node.metadata?.slideNumber : node.metadata?.pageNumber) ?? this.pages.length + 1;
        this.pages.push({ number, start, end: this.text.length });
        return;
      }
      default:
        this.addAll(node.children);
    }
  }

  private addAll(nodes: OfficeContentNode[] | undefined): void {
    for (const child of nodes ?? []) this.add(child);
  }

  /**
   * Rows of cells as labelled lines. The header is the first row filled at least half as full as
   * the fullest row: a report's sheet often opens with a title and a unit line above its header,
   * and those stay plain lines above the table.
   */
  private table(rows: OfficeContentNode[]): void {
    const cells = rows
      .filter((row) => row.type === "row")
      .map((row) => {
        const values: string[] = [];
        for (const [i, cell] of (row.children ?? []).entries()) {
          const col = cell.type === "cell" && cell.metadata?.col !== undefined ? cell.metadata.col : i;
          values[col] = textOf(cell);
        }
        return Array.from(values, (value) => value ?? "");
      })
      .filter((row) => row.some((value) => value.trim() !== ""));
    if (cells.length === 0) return;
    const filled = (row: string[]) => row.filter((value) => value.trim() !== "").length;
    const fullest = Math.max(...cells.map(filled));
    const headerAt = cells.findIndex((row) => filled(row) * 2 >= fullest);
    const titles = cells.slice(0, headerAt).map((row) => row.map(oneLine).filter(Boolean).join(" "));
    this.block([...titles, ...labelledRows(cells[headerAt], cells.slice(headerAt + 1)).lines].join("\n"));
  }

  /** Appends one block after a separator; returns where it starts, or the current end when it is empty. */
  private block(content: string, separator = "\n\n"): number {
    if (!content) return this.text.length;
    if (this.text) this.text += this.text.endsWith("\n") && separator === "\n" ? "" : separator;
    const start = this.text.length;
    this.text += content;
    this.blockStarts.push(start);
    return start;
  }
}

function textOf(node: OfficeContentNode): string {
  if (node.type === "break") return "\n";
  if (node.children?.length) {
    return node.children
      .filter((child) => !SKIPPED.has(child.type))
      .map((child) => (child.type === "paragraph" || child.type === "list" ? `${textOf(child)}\n` : textOf(child)))
      .join("")
      .trim();
  }
  return node.text ?? "";
}

/** Line endings as everywhere else, no stray blank runs inside a block. */
function tidy(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(/\u00a0/g, " ").replace(/\n{3,}/g, "\n\n").trim();
}
