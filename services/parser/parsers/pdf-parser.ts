// PDF text through unpdf (a serverless build of Mozilla's pdf.js). Pages are joined with a blank
// line, and each page's span is recorded so that chunks can cite page numbers.
import { extractText, getDocumentProxy } from "unpdf";
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
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
    const { text: pageTexts } = await extractText(pdf);
    const metadata = await pdfMetadata(pdf);
    return { ...joinPages(pageTexts, fileName), sections: [], metadata };
  } catch (error) {
    if (error instanceof FailedPreconditionError) throw error;
    const name = (error as Error)?.name;
    if (name === "PasswordException") {
      throw new InvalidInputError(`${fileName} is a password-protected PDF; upload it without the password`, { cause: error });
    }
    throw new InvalidInputError(`corrupt or unreadable PDF: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  } finally {
    await pdf?.destroy().catch(() => {});
  }
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
