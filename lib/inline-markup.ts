// Markdown's inline marks as an answer drops them: an extractive answer quotes a sentence without
// its `code` ticks, **bold**, __bold__ and list bullet, so it reads as prose. Whatever compares
// text a person copied from an answer with the stored chunk (the retrieval debugger's expected
// text) must drop them the same way, or a phrase copied from the answer is "not in the knowledge
// base" because its chunk wrote `lib/`.
const LIST_ITEM = /^\s*([-*+]|\d+\.)\s+/;
const INLINE_MARKS = /\*\*|__|`/g;

/** One line without its list bullet and inline marks; whitespace as it was. */
export function withoutInlineMarkup(line: string): string {
  return line.replace(LIST_ITEM, "").replace(INLINE_MARKS, "");
}

/** Every line of a text without its list bullet and inline marks. */
export function textWithoutInlineMarkup(text: string): string {
  return text.split("\n").map(withoutInlineMarkup).join("\n");
}
