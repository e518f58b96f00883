// How informative a Chinese word is in the language at large: jieba's IDF table (idf.txt, shipped
// with @node-rs/jieba and computed by jieba's authors over a general corpus). A word every text uses
// ("主要", "地方", "属于") tells less than a name or a term ("穴蝰", "习性") whatever the passages at
// hand happen to hold. Words the table lacks — mostly names and rare terms — take its median, as
// jieba's own keyword extraction does.
import { idf } from "@node-rs/jieba/dict.js";
import { HAN } from "./content-terms.ts";

let table: { idf: Map<string, number>; median: number } | undefined;

/** Loaded on first use (≈270,000 entries). */
function idfTable(): { idf: Map<string, number>; median: number } {
  if (table) return table;
  const entries = new Map<string, number>();
  for (const line of Buffer.from(idf).toString("utf8").split("\n")) {
    const space = line.lastIndexOf(" ");
    const value = Number(line.slice(space + 1));
    if (space > 0 && Number.isFinite(value)) entries.set(line.slice(0, space), value);
  }
  const sorted = [...entries.values()].sort((a, b) => a - b);
  table = { idf: entries, median: sorted[sorted.length >> 1] ?? 1 };
  return table;
}

/**
 * The word's IDF in jieba's table, relative to the table's median (an unknown word: 1). Undefined
 * for a word without Chinese characters: no such table ships for other languages, so their words
 * are weighed by the retrieved passages alone.
 */
export function languageRarity(word: string): number | undefined {
  if (!HAN.test(word)) return undefined;
  const { idf: entries, median } = idfTable();
  return (entries.get(word) ?? median) / median;
}

/** Whether jieba's table has the word: a word of the language, not one its segmenter made up for a run of unknown characters. */
export function inLanguageTable(word: string): boolean {
  return idfTable().idf.has(word);
}
