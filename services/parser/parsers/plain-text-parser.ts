import type { ParsedContent } from "./parsed-content.ts";

/** Plain text has no structure to recover; the decoded text is the document. */
export function parsePlainText(text: string): ParsedContent {
  return { text, pages: [], sections: [], metadata: {} };
}
