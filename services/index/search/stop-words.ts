// The words a keyword query may leave out (not yet the default: eval/stop-word-study.ts measures it;
// SciFact passes, ArguAna is still to run): Lucene's English stop set (EnglishAnalyzer, OpenSearch's
// and Elasticsearch's `_english_`). The query is built from the question's content words on every
// backend alike (query-terms.ts), so a chunk that shares only "of" or "the" with the question is no
// keyword hit anywhere — a score cutoff could not do that, since OpenSearch's native hybrid fuses in
// the engine. The index keeps every word: phrases and the debugger's expected text still find them.
// Han text keeps its function characters (的, 了): jieba's words and the character grams carry them,
// and docs/EVALUATION.md measured the Chinese keyword rule with them in.
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split(" "),
);

/** Every word of the question is searched (today's rule on every backend). */
export const NO_STOP_WORDS: ReadonlySet<string> = new Set();
