// Turns text into whitespace-separated search terms so a plain whitespace/unicode tokenizer (SQLite
// FTS5, OpenSearch's whitespace analyzer) can run BM25 over Chinese and Japanese too: those scripts
// write words without spaces, so without segmentation a two-character word inside a sentence would
// never match. Runs of Han characters go through jieba's search mode, which emits the words and
// their dictionary sub-words ("检察院" → 检察, 察院, 检察院), followed by the run's character
// unigrams and bigrams: a query segmented differently from the text (the colloquial "脑梗" against
// "脑梗塞", which jieba keeps whole) still shares bigrams with it. docs/EVALUATION.md measured this
// rule, on index and query text alike, at cMedIR nDCG@10 0.715 → 0.774 without regressing CMRC 2018;
// it costs roughly 3× the Han terms in the index. Other scripts are split on anything that is not a
// letter, mark or digit (a katakana run stays one word: jieba's dictionary has no kana and would cut
// it into single characters). English stemming is left to each backend's analyzer (FTS5 porter,
// OpenSearch porter_stem; english-stems.ts where an Elasticsearch node has no stemmer), which applies
// it to index and query terms alike. Index and query text go through the same function, so the two
// sides always agree on what a term is.
import { Jieba } from "@node-rs/jieba";
import { dict } from "@node-rs/jieba/dict.js";

const HAN = String.raw`\p{Script=Han}〆`;
// The prolonged sound mark belongs to katakana words.
const KATAKANA = String.raw`\p{Script=Katakana}ー`;
// A Han run, a katakana run, or a run of other letters/marks/digits (so "GDP增长" splits in two).
const TERM_RUNS = new RegExp(
  String.raw`([${HAN}]+)|([${KATAKANA}]+)|((?:(?![${HAN}${KATAKANA}])[\p{L}\p{M}\p{N}])+)`,
  "gu",
);
const SEARCHABLE = /[\p{L}\p{N}]/u;

let jieba: Jieba | undefined;

// The default dictionary is ~5 MB to parse: load it on first use, once per process.
function segmenter(): Jieba {
  jieba ??= Jieba.withDict(dict);
  return jieba;
}

function* terms(text: string): Generator<string> {
  // NFKC folds full-width Latin and digits ("ＧＤＰ", "２０２４") into their ASCII forms.
  const normalized = text.normalize("NFKC").toLowerCase();
  for (const match of normalized.matchAll(TERM_RUNS)) {
    const [, han, katakana, word] = match;
    if (word) {
      yield word;
    } else if (katakana) {
      yield katakana;
    } else if (han) {
      for (const token of segmenter().cutForSearch(han, true)) {
        if (SEARCHABLE.test(token)) yield token;
      }
      yield* characterGrams(han);
    }
  }
}

// Every character, then every pair of adjacent characters, of one Han run (by code point, so
// characters outside the BMP stay whole). A gram equal to one of jieba's words is not merged with it:
// the rule adds the grams to jieba's words, so such a term counts twice in BM25's term frequency.
function* characterGrams(run: string): Generator<string> {
  const characters = [...run];
  yield* characters;
  for (let i = 1; i < characters.length; i++) yield characters[i - 1] + characters[i];
}

/** The text as space-separated, lower-cased terms, ready for a whitespace tokenizer. */
export function segmentForIndex(text: string): string {
  return [...terms(text)].join(" ");
}

/** The distinct terms of a query, in order of first appearance; punctuation and operators dropped. */
export function segmentQuery(text: string): string[] {
  return [...queryTermCounts(text).keys()];
}

/** Each distinct term of a query with how often the query says it, in order of first appearance. */
export function queryTermCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}
