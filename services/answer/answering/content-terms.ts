// The content words of a question or a passage, for matching them lexically: the extractive
// answerer scores sentences with them and the citation verifier measures support with them.
import { Jieba } from "@node-rs/jieba";
import { dict } from "@node-rs/jieba/dict.js";

export const HAN = /\p{Script=Han}/u;

// Function words carry no topic; matching them would rank every sentence alike.
const STOPWORDS = new Set(
  (
    "a about an and are as at be by use uses used using can could did do does for from has have how i if in is it its me my of on or our should so " +
    "than that the their them then there these this those to was we were what when where which who why will with would you your " +
    "的 了 是 吗 呢 吧 啊 在 和 与 及 或 我 我们 你 你们 他 她 它 什么 怎么 怎样 如何 为什么 哪 哪里 哪些 多少 吗 请 请问 能 可以 会 要 有 没有 一个 这 那 这个 那个 就 都 也 还 把 被 对 从 到 " +
    "呀 啦 嘛 哦 么 呗 他们 她们 它们 其 之 所 为 于 以 而 并 且 又 等 由 将 曾 曾经 有过 一共 时候 东西 什么样 怎么样 样子 哪个 以前 之前 以后 之后 " +
    // Demonstratives point back at the text the question was written about, and request words
    // wrap the question: neither names what a passage is about.
    "此 该 此次 这次 这一 这部 这些 那些 文中 给 介绍 一下 简述 有着 还有 除了"
  ).split(" "),
);

/** Whether a word is on the stop list: a function word or a question word that names no topic. */
export function isStopWord(word: string): boolean {
  return STOPWORDS.has(word);
}

let jieba: Jieba | undefined;
/** Loaded on first use (≈0.2 s): only turns that match text lexically need it. */
function segmenter(): Jieba {
  jieba ??= Jieba.withDict(dict);
  return jieba;
}

/** Content words of a text, lowercased; jieba splits Chinese into words and leaves other scripts' words whole. */
export function terms(text: string): string[] {
  return segmenter()
    .cutForSearch(text.normalize("NFKC").toLowerCase(), true)
    .filter((t) => /[\p{L}\p{N}]/u.test(t) && !STOPWORDS.has(t) && (t.length > 1 || HAN.test(t) || /\p{N}/u.test(t)));
}

/** The words of a Chinese text with the part-of-speech tag jieba gives each (ns: place name, nr: person name, …). */
export function segmentTags(text: string): { word: string; tag: string }[] {
  return segmenter().tag(text, true);
}

/** The part-of-speech tags jieba gives the words of a Chinese text (ns: place name, nr: person name, …). */
export function namedEntityTags(text: string): Set<string> {
  return new Set(segmenter().tag(text.normalize("NFKC"), true).map((t) => t.tag));
}

/**
 * English plural and verb endings folded ("citations" finds "citation"; "replaced", "replaces" and
 * "replace" meet at "replac"); other scripts unchanged.
 */
export function stem(term: string): string {
  if (!/^[a-z]+$/.test(term) || term.length <= 4) return term;
  const folded = term.replace(/(ies)$/, "y").replace(/(sses)$/, "ss").replace(/([^s])s$/, "$1").replace(/(ing|ed)$/, "");
  return folded.length > 4 ? folded.replace(/([^e])e$/, "$1") : folded;
}

/** A text's terms, stemmed, with its normalised form for substring tests of Chinese words. */
export interface TermBag {
  terms: Set<string>;
  normalized: string;
  /** As written, for tests that need case or script (names, places). */
  text: string;
}

export function termBag(text: string): TermBag {
  return { terms: new Set(terms(text).map(stem)), normalized: text.normalize("NFKC").toLowerCase(), text };
}

/**
 * Whether a text holds a term. Chinese words are also found inside longer words ("重置" in
 * "重置链接"), because jieba may segment the same characters differently in another sentence.
 */
export function holds(bag: TermBag, term: string): boolean {
  return bag.terms.has(stem(term)) || (HAN.test(term) && bag.normalized.includes(term));
}
