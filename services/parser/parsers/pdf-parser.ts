// PDF text through unpdf (a serverless build of Mozilla's pdf.js). Pages are joined with a blank
// line, and each page's span is recorded so that chunks can cite page numbers.
import { getDocumentProxy } from "unpdf";
import type { PageSpan } from "../../../lib/domain.ts";
import { FailedPreconditionError, InvalidInputError } from "../../../lib/errors.ts";
import type { ParsedContent } from "./parsed-content.ts";

const PAGE_SEPARATOR = "\n\n";

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

export async function parsePdf(bytes: Uint8Array, fileName: string): Promise<ParsedContent> {
  let pdf: PdfDocument | undefined;
  try {
    // pdf.js takes ownership of (and may detach) the buffer it is given, so it gets a copy, and a
    // plain Uint8Array at that: it refuses a Buffer. verbosity 0 keeps its font warnings off stdout.
    // stopAtErrors: pdf.js otherwise skips what it cannot read in a page and returns the rest, so a
    // damaged file came out READY with a fraction of its text (issue 23: 6 tokens of 2,555).
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, stopAtErrors: true });
    const pageTexts = await readPages(pdf, fileName);
    const metadata = await pdfMetadata(pdf);
    return { ...joinPages(pageTexts, fileName), sections: [], metadata };
  } catch (error) {
    if (error instanceof FailedPreconditionError || error instanceof InvalidInputError) throw error;
    const name = (error as Error)?.name;
    if (name === "PasswordException") {
      throw new InvalidInputError(`${fileName} is a password-protected PDF; upload it without the password`, { cause: error });
    }
    throw new InvalidInputError(`corrupt or unreadable PDF: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  } finally {
    await pdf?.destroy().catch(() => {});
  }
}

/**
 * Each page's text as unpdf's extractText joins it, page by page so that the pages that fail are
 * named: a PDF with any unreadable page fails with them rather than being indexed in part.
 */
async function readPages(pdf: PdfDocument, fileName: string): Promise<string[]> {
  const texts: string[] = [];
  const failed: { page: number; reason: string }[] = [];
  for (let number = 1; number <= pdf.numPages; number++) {
    try {
      const content = await (await pdf.getPage(number)).getTextContent();
      texts.push(content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join(""));
    } catch (error) {
      if ((error as Error)?.name === "PasswordException") throw error;
      failed.push({ page: number, reason: (error as Error)?.message ?? String(error) });
      texts.push("");
    }
  }
  if (failed.length > 0) {
    const pages = failed.map((f) => f.page).join(", ");
    throw new InvalidInputError(
      `${fileName} is damaged: ${failed.length === 1 ? "page" : "pages"} ${pages} of ${pdf.numPages} could not be read (${failed[0].reason}); ` +
        "rather than index part of it, Quarry leaves it out — repair or re-export the PDF and upload it again",
    );
  }
  return texts;
}

function joinPages(pageTexts: string[], fileName: string): Pick<ParsedContent, "text" | "pages"> {
  const pages: PageSpan[] = [];
  let text = "";
  pageTexts.forEach((raw, i) => {
    if (i > 0) text += PAGE_SEPARATOR;
    const pageText = raw.replace(/\r\n?/g, "\n").replace(/\0/g, "").trim();
    pages.push({ number: i + 1, start: text.length, end: text.length + pageText.length });
    text += pageText;
  });
  if (text.trim() === "") {
    throw new FailedPreconditionError(
      `${fileName} has no text layer (a scanned or image-only PDF); the Tika parser (with OCR) handles it — configure TIKA_URL`,
    );
  }
  return { text, pages };
}

async function pdfMetadata(pdf: PdfDocument): Promise<Record<string, string>> {
  const metadata: Record<string, string> = { pageCount: String(pdf.numPages) };
  const { info } = (await pdf.getMetadata().catch(() => ({ info: {} }))) as { info: Record<string, unknown> };
  for (const [key, field] of [["title", "Title"], ["author", "Author"], ["subject", "Subject"], ["producer", "Producer"]] as const) {
    const value = info[field];
    if (typeof value === "string" && value.trim()) metadata[key] = value.trim();
  }
  return metadata;
}
