/**
 * What retrieval reads for a chunk: its text under its heading path. A chunk deep in a section
 * rarely repeats the heading that says what it is about (a paper's title, a chapter's name), so
 * both the embedder and the keyword index see the path first. The chunker leaves room for it below
 * the model's input limit; the stored chunk text stays exactly the span that citations point at.
 */
export function withHeadingPath(text: string, sectionPath: readonly string[]): string {
  return sectionPath.length ? `${sectionPath.join(" > ")}\n${text}` : text;
}
