import { htmlToText, WEB_PAGE_OPTIONS } from "../html-text.ts";
import type { ParsedContent } from "./parsed-content.ts";

/** A web page as a reader sees it: no scripts or navigation, headings as sections, the <title> as metadata. */
export function parseHtml(html: string): ParsedContent {
  const page = htmlToText(html, WEB_PAGE_OPTIONS);
  const metadata: Record<string, string> = {};
  if (page.title) metadata.title = page.title;
  const author = page.meta.author ?? page.meta["dc:creator"];
  if (author) metadata.author = author;
  return { text: page.text, pages: [], sections: page.sections, metadata };
}
