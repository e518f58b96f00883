// Answer-quality metrics for `quarry eval-answers`: does the answer contain a gold answer, how
// close is it (CMRC 2018's own F1), how long is it, and do its citations point at a chunk holding
// the answer. Pure functions over strings; the unit tests pin them to hand-computed cases.
import { percentile } from "./metrics.ts";

/** Width (NFKC: full-width Ａ１ → A1), case and runs of whitespace folded, so formatting never decides a hit. */
export function normalizeForMatch(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

/** Whitespace removed too: Chinese answers are compared without the spaces a parser may have kept or dropped. */
function compact(text: string): string {
  return normalizeForMatch(text).replace(/\s+/g, "");
}

/** True when the text contains one of the gold answers after normalising width, case and whitespace. */
export function containsGold(text: string, golds: readonly string[]): boolean {
  const haystack = compact(text);
  return golds.some((gold) => {
    const needle = compact(gold);
    return needle.length > 0 && haystack.includes(needle);
  });
}

// The characters CMRC 2018's scorer (cmrc2018_evaluate.py, v4/v5) treats as punctuation: split out
// of English runs, and dropped before F1. "……" is in its list as one two-character string, which a
// per-character loop never matches, so "…" is kept, as there.
const CMRC_PUNCTUATION = new Set([
  "-", ":", "_", "*", "^", "/", "\\", "~", "`", "+", "=",
  "，", "。", "：", "？", "！", "“", "”", "；", "’", "《", "》", "·", "、",
  "「", "」", "（", "）", "－", "～", "『", "』",
]);
// The scorer's test for a Chinese character: the basic CJK Unified Ideographs block only.
const CJK = /[\u4e00-\u9fa5]/;

/**
 * The scorer's `mixed_segmentation(s, rm_punc=True)`: lowercased and trimmed, every Chinese
 * character its own segment, runs of other characters tokenised into words, CMRC punctuation
 * dropped. The scorer tokenises those runs with nltk's word_tokenize; here a run splits at
 * whitespace, words keep inner dots and apostrophes ("3.5", "u.s") and every other symbol stands
 * alone — word_tokenize on plain text, short of its contraction and quote rules.
 */
export function cmrcSegments(text: string): string[] {
  const segments: string[] = [];
  let run = "";
  const flush = () => {
    segments.push(...(run.match(/[\p{L}\p{N}\p{M}_]+(?:[.'’][\p{L}\p{N}\p{M}_]+)*|[^\s\p{L}\p{N}\p{M}]/gu) ?? []));
    run = "";
  };
  for (const char of text.toLowerCase().trim()) {
    if (CMRC_PUNCTUATION.has(char)) continue;
    if (CJK.test(char)) {
      flush();
      segments.push(char);
    } else run += char;
  }
  flush();
  return segments;
}

/** Length of the longest common contiguous run of segments (the scorer's find_lcs: a substring, not a subsequence). */
export function longestCommonRun(a: readonly string[], b: readonly string[]): number {
  let best = 0;
  let previous = new Array<number>(b.length + 1).fill(0);
  for (let i = 0; i < a.length; i++) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let j = 0; j < b.length; j++) {
      if (a[i] === b[j]) {
        current[j + 1] = previous[j] + 1;
        if (current[j + 1] > best) best = current[j + 1];
      }
    }
    previous = current;
  }
  return best;
}

/**
 * CMRC 2018's F1 (calc_f1_score): for each gold answer, precision = common run / prediction
 * segments and recall = common run / gold segments; the best gold counts. 0 for no gold.
 */
export function cmrcF1(prediction: string, golds: readonly string[]): number {
  const predicted = cmrcSegments(prediction);
  let best = 0;
  for (const gold of golds) {
    const expected = cmrcSegments(gold);
    const common = longestCommonRun(expected, predicted);
    if (common === 0) continue;
    const precision = common / predicted.length;
    const recall = common / expected.length;
    best = Math.max(best, (2 * precision * recall) / (precision + recall));
  }
  return best;
}

/** Citation markers ([n], [n, m], 【n】) and the spaces before them, removed. */
export function withoutMarkers(text: string): string {
  return text.replace(/[ \t]*[[【［][ \t]*[0-9０-９]{1,4}(?:[ \t]*[,，、;；][ \t]*[0-9０-９]{1,4})*[ \t]*[\]】］]/g, "");
}

/**
 * The answer as a reader takes it: markers removed, and the lines that are the product's own
 * notices (e.g. "extractive answer, no language model configured") dropped, so they count neither
 * as answer text nor towards its length.
 */
export function answerBody(text: string, notices: readonly string[]): string {
  return withoutNotices(withoutMarkers(text), notices);
}

/** The lines that are the product's own notices dropped; markers kept. */
export function withoutNotices(text: string, notices: readonly string[]): string {
  const noticeSet = new Set(notices.map(normalizeForMatch));
  return text
    .split("\n")
    .filter((line) => !noticeSet.has(normalizeForMatch(line)))
    .join("\n")
    .trim();
}

/** The median of the values (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** What one Chat turn produced, as the evaluation saw it through the gateway. */
export interface AnsweredQuery {
  /** The streamed answer text. */
  text: string;
  /** The texts of the chunks the answer cites. */
  citedChunkTexts: string[];
  /** Marker occurrences that resolved to a context chunk, and how many of them their chunk does not support. */
  resolvedMarkers: number;
  unsupportedMarkers: number;
  /** False when Quarry said the knowledge bases do not answer the question (ChatFinal.answered); its citations are then the closest passages, not sources. */
  answered: boolean;
  /** Why Quarry answered or not (ChatFinal.answered_reason), and the evidence's coverage of the question. */
  answeredReason?: string;
  coverage?: number;
  /** Milliseconds to the first text delta and to the end of the stream; NaN when there was none (a refused question). */
  firstTokenMs: number;
  totalMs: number;
  /** The stored turn (ChatStarted), and what it retrieved and read, read back after the answer. */
  turnId?: string;
  trace?: TurnTrace;
}

/** A turn as texts: the candidates retrieval returned and the numbered context the answerer read. */
export interface TurnTrace {
  retrievedTexts: string[];
  context: {
    number: number;
    chunkId: string;
    documentId: string;
    fileName: string;
    sectionPath: string[];
    /** The chunk's index and start offset in its document (whether it opens the document). */
    index: number;
    start: number;
    text: string;
    /** Its ranks in the keyword and vector lists; 0 when not in one. */
    bm25Rank: number;
    vectorRank: number;
  }[];
}

export interface AnswerMetrics {
  queries: number;
  answerHitRate: number;
  answerF1: number;
  medianAnswerChars: number;
  citationHitRate: number;
  unsupportedCitationRate: number;
  /** Share of the questions Quarry said the documents do not answer: on answerable questions, each is a false abstention. */
  abstainRate: number;
  p50FirstTokenMs: number;
  p50TotalMs: number;
}

/**
 * The metrics over every evaluated query. Rates are shares of queries, except the unsupported
 * citation rate, which is a share of all resolved markers (an answer with many citations weighs
 * more). Lengths are counted in code points of the answer body.
 */
export function summarizeAnswers(results: readonly { answered: AnsweredQuery; golds: readonly string[] }[], notices: readonly string[]): AnswerMetrics {
  let hits = 0;
  let f1 = 0;
  let citationHits = 0;
  let resolved = 0;
  let unsupported = 0;
  let abstained = 0;
  const lengths: number[] = [];
  const firstTokens: number[] = [];
  const totals: number[] = [];
  for (const { answered, golds } of results) {
    const body = answerBody(answered.text, notices);
    if (containsGold(body, golds)) hits++;
    f1 += cmrcF1(body, golds);
    lengths.push([...body].length);
    // An abstention's passages are listed as the closest, not cited as the answer's sources.
    if (answered.answered && answered.citedChunkTexts.some((chunk) => containsGold(chunk, golds))) citationHits++;
    if (!answered.answered) abstained++;
    resolved += answered.resolvedMarkers;
    unsupported += answered.unsupportedMarkers;
    if (Number.isFinite(answered.firstTokenMs)) firstTokens.push(answered.firstTokenMs);
    if (Number.isFinite(answered.totalMs)) totals.push(answered.totalMs);
  }
  const n = results.length;
  return {
    queries: n,
    answerHitRate: n ? hits / n : Number.NaN,
    answerF1: n ? f1 / n : Number.NaN,
    medianAnswerChars: median(lengths),
    citationHitRate: n ? citationHits / n : Number.NaN,
    unsupportedCitationRate: resolved ? unsupported / resolved : 0,
    abstainRate: n ? abstained / n : Number.NaN,
    p50FirstTokenMs: percentile(firstTokens, 50),
    p50TotalMs: percentile(totals, 50),
  };
}
