import type { SectionSpan } from "../../lib/domain.ts";

export interface Heading {
  level: number;
  title: string;
  /** Offset of the heading's first character in the parsed text. */
  start: number;
}

/**
 * Sections from headings in document order. Sections do not overlap: each runs from its heading to
 * the next heading of any level, and the path carries the nesting, so every offset belongs to at
 * most one section and a chunk's section path is a plain lookup. Text before the first heading
 * belongs to no section.
 */
export function sectionsFromHeadings(headings: Heading[], text: string): SectionSpan[] {
  const sections: SectionSpan[] = [];
  const open: Heading[] = [];
  headings.forEach((heading, i) => {
    while (open.length > 0 && open[open.length - 1].level >= heading.level) open.pop();
    open.push(heading);
    const next = i + 1 < headings.length ? headings[i + 1].start : text.length;
    sections.push({
      path: open.map((h) => h.title),
      level: heading.level,
      start: heading.start,
      end: Math.max(heading.start, trimmedEnd(text, next)),
    });
  });
  return sections;
}

function trimmedEnd(text: string, end: number): number {
  while (end > 0 && /\s/.test(text[end - 1])) end--;
  return end;
}
