// Marks the query's terms in a chunk: Latin words as whole words (case-insensitive), Han text by
// each run of two or more characters and each single character of a one-character term, since
// Chinese has no spaces to find words by.
import { Fragment } from "react";

export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const word of query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (/\p{Script=Han}/u.test(word)) {
      for (const run of word.match(/\p{Script=Han}+/gu) ?? []) {
        if (run.length === 1) terms.add(run);
        // Bigrams find a phrase inside text that splits it differently than the query does.
        for (let i = 0; i + 1 < run.length; i++) terms.add(run.slice(i, i + 2));
      }
      for (const rest of word.split(/\p{Script=Han}+/u)) if (rest.length > 1) terms.add(rest);
    } else if (word.length > 1) {
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
