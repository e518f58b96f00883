// Porter stemming of pre-segmented terms (text-segmenter.ts), for an engine whose server cannot stem:
// Quarry's Elasticsearch dialect on a distribution without the analysis-common module (the Maven
// Central zip). It is the algorithm the other backends' analyzers apply — OpenSearch's porter_stem
// (Lucene's PorterStemmer) and FTS5's porter tokenizer — so BM25 sees the same terms everywhere.
// The `stemmer` package was chosen by measurement, not by name: on SciFact's 36,011 distinct terms
// (corpus and queries, segmented) it returns OpenSearch's porter_stem output for all but one
// ("eed", which Lucene leaves whole and it cuts to "e"); `porter-stemmer` scored the same, and
// `stemmer` is the maintained, typed ES module. Terms without a Latin letter (Han, kana, Hangul,
// digits) pass through as they are: Porter's suffixes are ASCII, so Lucene leaves them alone too.
import { stemmer } from "stemmer";

const LATIN_LETTER = /[a-z]/;

/** One lower-cased term's Porter stem. */
export function stemTerm(term: string): string {
  return LATIN_LETTER.test(term) ? stemmer(term) : term;
}

/** Space-separated terms (segmentForIndex's output), each replaced by its stem. */
export function stemSegmented(text: string): string {
  return text.split(" ").map(stemTerm).join(" ");
}
