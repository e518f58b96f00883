import { Jieba } from "@node-rs/jieba";
import { dict } from "@node-rs/jieba/dict.js";
import type { ContextChunk } from "./context-builder.ts";

export interface ExtractiveOptions {
  /** How many of the top context chunks to take sentences from. */
  maxChunks?: number;
  /** How many sentences the answer holds at most. */
  maxSentences?: number;
}

export interface ExtractiveAnswer {
  /** The answer with [n] markers after each sentence; run it through the CitationMapper like model output. */
  text: string;
  /** False when no passage matched, so the text only says that. */
  found: boolean;
}

const HAN = /\p{Script=Han}/u;

// Function words carry no topic; matching them would rank every sentence alike.
const STOPWORDS = new Set(
  (
    "a an and are as at be by can could did do does for from has have how i if in is it its me my of on or our should so " +
    "than that the their them then there these this those to was we were what when where which who why will with would you your " +
    "的 了 是 吗 呢 吧 啊 在 和 与 及 或 我 我们 你 你们 他 她 它 什么 怎么 怎样 如何 为什么 哪 哪里 哪些 多少 吗 请 请问 能 可以 会 要 有 没有 一个 这 那 这个 那个 就 都 也 还 把 被 对 从 到"
  ).split(" "),
);

let jieba: Jieba | undefined;
/** Loaded on first use (≈0.2 s): only turns without a language model need it. */
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

const STRUCTURAL_LINE = /^\s*(#{1,6}\s|\||!\[|```)/;

/** Markdown emphasis, code ticks and list bullets removed, so the sentence reads as prose. */
function withoutMarkup(text: string): string {
  return text.replace(/^\s*([-*+]|\d+\.)\s+/, "").replace(/\*\*|__|`/g, "").replace(/\s+/g, " ").trim();
}

/** English plural and verb endings folded ("citations" finds "citation"); other scripts unchanged. */
function stem(term: string): string {
  if (!/^[a-z]+$/.test(term) || term.length <= 4) return term;
  return term.replace(/(ies)$/, "y").replace(/(sses)$/, "ss").replace(/([^s])s$/, "$1").replace(/(ing|ed)$/, "");
}

/** Sentences with their offsets; 。！？ end sentences too, and line breaks always do (lists, headings). */
export function splitSentences(text: string, locale: string): { text: string; start: number }[] {
  const segmenter = new Intl.Segmenter(locale, { granularity: "sentence" });
  const out: { text: string; start: number }[] = [];
  let lineStart = 0;
  // A line break inside an English paragraph is only wrapping: it becomes a space (same length, so
  // offsets hold). Breaks after Chinese text (which is not wrapped by hand) and before blank lines,
  // list items, headings and table rows stay sentence ends.
  const unwrapped = text.replace(/([^\n\p{Script=Han}。！？；：])\n(?=[^\n])(?!\s*([-*+]\s|\d+\.\s|#|\||```))/gu, "$1 ");
  for (const line of unwrapped.split("\n")) {
    for (const s of segmenter.segment(line)) {
      const trimmed = s.segment.trim();
      if (trimmed) out.push({ text: trimmed, start: lineStart + s.index });
    }
    lineStart += line.length + 1;
  }
  return out;
}

/**
 * An answer made without a language model: the sentences of the top chunks that share the most
 * words with the question, each followed by its chunk's marker. Scores favour coverage of the
 * question's terms, then the chunk's retrieval rank; chosen sentences keep their document order
 * within a chunk so they still read as prose.
 */
export function extractiveAnswer(question: string, context: readonly ContextChunk[], options: ExtractiveOptions = {}): ExtractiveAnswer {
  const chinese = HAN.test(question);
  const label = chinese
    ? "摘录式回答（未配置语言模型）——最相关的段落："
    : "Extractive answer (no language model configured) — the most relevant passages:";
  const none = chinese
    ? "摘录式回答（未配置语言模型）：所选知识库中没有与该问题相关的段落。"
    : "Extractive answer (no language model configured): no passage in the selected knowledge bases matches the question.";

  const queryTerms = [...new Set(terms(question))];
  const chunks = context.slice(0, options.maxChunks ?? 5);
  const maxSentences = options.maxSentences ?? 5;

  type Candidate = { chunkIndex: number; order: number; text: string; terms: Set<string>; score: number };
  const sentences: Omit<Candidate, "score">[] = [];
  chunks.forEach((chunk, chunkIndex) => {
    splitSentences(chunk.hit.chunk.text, chinese ? "zh" : "en").forEach((sentence, order) => {
      const text = withoutMarkup(sentence.text);
      // Headings, table rows and bare links say where an answer is, not what it is.
      if (!text || STRUCTURAL_LINE.test(sentence.text)) return;
      sentences.push({ chunkIndex, order, text, terms: new Set(terms(text).map(stem)) });
    });
  });
  // A question word that every passage shares (often the product's own name) tells the sentences
  // apart less than a rare one, so each term counts by its inverse frequency among the sentences.
  const weight = new Map(
    queryTerms.map((t) => {
      const stemmed = stem(t);
      const df = sentences.filter((s) => s.terms.has(stemmed) || (HAN.test(t) && s.text.includes(t))).length;
      return [t, Math.log(1 + (sentences.length + 1) / (df + 0.5))];
    }),
  );
  const total = [...weight.values()].reduce((a, b) => a + b, 0) || 1;
  const candidates: Candidate[] = [];
  for (const sentence of sentences) {
    const matched = queryTerms.filter((t) => sentence.terms.has(stem(t)) || (HAN.test(t) && sentence.text.includes(t)));
    if (matched.length === 0) continue;
    const coverage = matched.reduce((sum, t) => sum + (weight.get(t) ?? 0), 0) / total;
    // Rank breaks near-ties; it never lifts a sentence that answers less of the question.
    const rankWeight = 1 / (1 + sentence.chunkIndex);
    candidates.push({ ...sentence, score: coverage * (1 + 0.1 * rankWeight) });
  }
  if (candidates.length === 0) return { text: none, found: false };

  // Sentences that answer far less of the question than the best one are padding, not support.
  const best = Math.max(...candidates.map((c) => c.score));
  const chosen = candidates
    .filter((c) => c.score >= best * 0.3)
    .sort((a, b) => b.score - a.score || a.chunkIndex - b.chunkIndex || a.order - b.order)
    .slice(0, maxSentences)
    .sort((a, b) => a.chunkIndex - b.chunkIndex || a.order - b.order);

  const lines: string[] = [];
  for (const chunkIndex of [...new Set(chosen.map((c) => c.chunkIndex))]) {
    const marker = `[${chunks[chunkIndex].number}]`;
    const sentences = chosen.filter((c) => c.chunkIndex === chunkIndex).map((c) => `${c.text}${chinese ? "" : " "}${marker}`);
    lines.push(`- ${sentences.join(chinese ? "" : " ")}`);
  }
  return { text: `${label}\n\n${lines.join("\n")}`, found: true };
}
