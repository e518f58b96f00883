// Whether a question names a document by its title: "上海轨道交通18号线的编号为多少？" names the
// article 上海轨道交通18号线. Such a document is the question's subject by the question's own words,
// which the extractive answerer cannot otherwise tell from a higher-ranked document that only
// mentions the name.

/**
 * Whether the question holds the title (the first of the section path) whole, compared without
 * punctuation, spaces or case and without a trailing disambiguation in brackets ("林投姐 (1988年电影)").
 * A title of one character names nothing.
 */
export function namesTitle(question: string, sectionPath: readonly string[]): boolean {
  const title = titleOf(sectionPath);
  return [...title].length >= 2 && comparable(question).includes(title);
}

/**
 * For each section path, whether the question names its title and no longer title among them that
 * holds it: "德龙烟铁路全长多少公里？" names 德龙烟铁路, and 龙烟铁路 only as a part of that name.
 */
export function namedTitles(question: string, sectionPaths: readonly (readonly string[])[]): boolean[] {
  const named = sectionPaths.map((path) => (namesTitle(question, path) ? titleOf(path) : undefined));
  return named.map((title) => title !== undefined && !named.some((other) => other !== undefined && other.length > title.length && other.includes(title)));
}

function titleOf(sectionPath: readonly string[]): string {
  return comparable((sectionPath[0] ?? "").replace(/\s*[(（][^()（）]*[)）]\s*$/u, ""));
}

function comparable(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/[\s\p{P}]+/gu, "");
}
