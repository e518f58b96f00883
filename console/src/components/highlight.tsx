// Marks the query's terms in a chunk: Latin words as whole words (case-insensitive), Han text by
// each run of two or more characters and each single character of a one-character term, since
// Chinese has no spaces to find words by.
import { Fragment } from "react";

// Function words say nothing about why a chunk matched (the keyword search gives them ~0 weight),
// and marking every "of" and "的" hides the words that did match. The answer service keeps the
// same kind of list (services/answer/answering/content-terms.ts); the console cannot import it. It
// holds all of Lucene's English stop set (services/index/search/stop-words.ts, OpenSearch's
// `_english_`) too.
const STOP_WORDS = new Set(
  (
    "a about an and are as at be but by can could did do does for from has have how i if in into is it its me my no not of on or our " +
    "should so such than that the their them then there these they this those to use was we were what when where which who why will " +
    "with would you your"
  ).split(" "),
);
const HAN_FUNCTION_CHARACTERS = new Set([..."的了是吗呢吧啊在和与及或我你他她它这那就都也还把被对从到呀么之其为于以而并且又等由将"]);

export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const word of query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (/\p{Script=Han}/u.test(word)) {
      for (const run of word.match(/\p{Script=Han}+/gu) ?? []) {
        if (run.length === 1 && !HAN_FUNCTION_CHARACTERS.has(run)) terms.add(run);
        // Bigrams find a phrase inside text that splits it differently than the query does.
        for (let i = 0; i + 1 < run.length; i++) terms.add(run.slice(i, i + 2));
      }
      for (const rest of word.split(/\p{Script=Han}+/u)) if (rest.length > 1 && !STOP_WORDS.has(rest)) terms.add(rest);
    } else if (word.length > 1 && !STOP_WORDS.has(word)) {
      terms.add(word);
    }
  }
  return [...terms].sort((a, b) => b.length - a.length);
}

export function Highlight({ text, terms }: { text: string; terms: string[] }) {
  if (terms.length === 0) return <>{text}</>;
  const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const latin = escaped.map((t) => (/\p{Script=Han}/u.test(t) ? t : `(?<![\\p{L}\\p{N}])${t}(?![\\p{L}\\p{N}])`));
  const pattern = new RegExp(`(${latin.join("|")})`, "giu");
  const parts = text.split(pattern);
  return (
    <>
      {parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : <Fragment key={i}>{part}</Fragment>))}
    </>
  );
}
