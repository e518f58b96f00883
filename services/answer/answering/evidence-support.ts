// Whether the retrieved evidence answers the question at all. Retrieval always returns its best
// candidates, and an answerer handed them quotes or paraphrases something fluent and cited whatever
// the question was; the reader cannot tell a real answer from the least bad passage. The rule here
// is the one a person applies when skimming: a passage answers a question only when it is about
// what the question names. Every content word of the question is weighted by how rare it is among
// the documents retrieved (a word they all share — "职业", "year" — tells nothing apart; the name
// of the question's subject usually is held by one document, or by none when no document is about
// it), and the evidence supports an answer when one document's retrieved passages, with their
// titles, hold at least half of that weight. Half is the principle, not a fitted figure: the
// passage must hold more of what the question asks about than it misses.
import { HAN, holds, termBag, type TermBag } from "./content-terms.ts";
import type { ContextChunk } from "./context-builder.ts";
import { analyseQuestion } from "./question-analysis.ts";

/** A document's passages must hold at least this share of the question's weighted content words. */
export const SUPPORT_THRESHOLD = 0.5;

/**
 * The share of a Chinese word's weight a passage earns for holding its characters without the
 * word itself (执导 for 导演), as the extractive answerer counts it.
 */
const CHARACTER_CREDIT = 0.3;

export interface EvidenceJudgement {
  answered: boolean;
  /** One sentence saying why, naming the numbers and the words that decided. */
  reason: string;
  /** Weighted share (0..1) of the question's content words the best document holds. */
  coverage: number;
  threshold: number;
  /** The question's content words, as counted. */
  questionTerms: string[];
  /** Content words no retrieved document holds. */
  missingTerms: string[];
  /** The context chunk of the best document that holds most of the question; undefined when nothing was retrieved. */
  best?: ContextChunk;
}

/**
 * Judges the context an answer would be made from. `searched` is what retrieval searched for when
 * it differs from the question (a follow-up's rewrite, or the follow-up with the previous
 * question's words): its words count too, and the document must then also hold at least half of
 * the follow-up's own words, so "and who do I call?" is not answered with the previous subject.
 */
export function judgeEvidence(question: string, context: readonly ContextChunk[], searched: string = question): EvidenceJudgement {
  const chinese = HAN.test(question);
  const own = analyseQuestion(question).terms;
  const questionTerms = [...new Set([...(searched === question ? [] : analyseQuestion(searched).terms), ...own])];
  const ownIndex = searched === question ? [] : questionTerms.map((t, i) => (own.includes(t) ? i : -1)).filter((i) => i >= 0);
  const base = { threshold: SUPPORT_THRESHOLD, questionTerms };
  if (context.length === 0) {
    return { ...base, answered: false, coverage: 0, missingTerms: questionTerms, reason: chinese ? "没有检索到任何段落" : "nothing was retrieved" };
  }
  if (questionTerms.length === 0) {
    // Nothing to match: the question names no subject ("and then?"), so no passage can be shown
    // to be about it.
    return { ...base, answered: false, coverage: 0, missingTerms: [], best: context[0], reason: chinese ? "问题中没有可供匹配的实词" : "the question names nothing a passage could be matched on" };
  }

  // A document's retrieved chunks together, with their titles: a sentence need not repeat its
  // document's subject to be about it.
  const documents = new Map<string, { chunks: ContextChunk[]; bag: TermBag }>();
  for (const chunk of context) {
    const id = chunk.hit.chunk.documentId;
    const doc = documents.get(id) ?? { chunks: [], bag: termBag("") };
    doc.chunks.push(chunk);
    documents.set(id, doc);
  }
  for (const doc of documents.values()) {
    doc.bag = termBag(doc.chunks.map((c) => `${c.hit.chunk.sectionPath.join(" ")}\n${c.hit.chunk.text}`).join("\n"));
  }
  const creditOf = (bag: TermBag, term: string): number => {
    if (holds(bag, term)) return 1;
    if (!HAN.test(term) || term.length < 2) return 0;
    const characters = [...term];
    return (CHARACTER_CREDIT * characters.filter((ch) => bag.normalized.includes(ch)).length) / characters.length;
  };
  const docs = [...documents.values()];
  const credits = docs.map((doc) => questionTerms.map((t) => creditOf(doc.bag, t)));
  // Rarity among the retrieved documents, as BM25's IDF: held by none weighs most.
  const weights = questionTerms.map((_, i) => {
    const df = credits.reduce((sum, c) => sum + c[i], 0);
    return Math.log(1 + (docs.length + 1) / (df + 0.5));
  });
  const total = weights.reduce((a, b) => a + b, 0);
  const coverages = credits.map((c) => c.reduce((sum, credit, i) => sum + credit * weights[i], 0) / total);
  const ownTotal = ownIndex.reduce((sum, i) => sum + weights[i], 0);
  const ownCoverage = (c: number[]) => (ownTotal ? ownIndex.reduce((sum, i) => sum + c[i] * weights[i], 0) / ownTotal : 1);
  // The best document, ties to the higher-ranked one (the map keeps rank order); with a follow-up,
  // among those that hold its own words.
  const eligible = credits.map((c) => ownCoverage(c) >= SUPPORT_THRESHOLD);
  const score = (i: number) => (eligible[i] ? coverages[i] : coverages[i] - 2);
  const bestDoc = coverages.reduce((best, _, i) => (score(i) > score(best) ? i : best), 0);
  const coverage = eligible[bestDoc] ? coverages[bestDoc] : Math.min(coverages[bestDoc], ownCoverage(credits[bestDoc]));
  const held = credits[bestDoc];
  // The chunk of that document holding most of the question, for "closest" and the record.
  const bestChunk = [...docs[bestDoc].chunks].sort((a, b) => chunkCredit(b, questionTerms) - chunkCredit(a, questionTerms))[0];
  const missingTerms = questionTerms.filter((_, i) => credits.every((c) => c[i] === 0));
  const answered = eligible[bestDoc] && coverage >= SUPPORT_THRESHOLD;
  const lacking = questionTerms.filter((_, i) => held[i] < 1);
  const share = coverage.toFixed(2);
  const ownLacking = ownIndex.filter((i) => held[i] < 1).map((i) => questionTerms[i]);
  if (!eligible[bestDoc]) {
    const reason = chinese
      ? `没有文档包含追问本身的词：${ownLacking.join("、")}`
      : `no document holds the follow-up's own words: ${ownLacking.join(", ")}`;
    return { ...base, answered: false, coverage, missingTerms, best: bestChunk, reason };
  }
  const reason = chinese
    ? `最相关的文档覆盖问题加权实词的 ${share}（需要 ${SUPPORT_THRESHOLD}）` + (lacking.length ? `；缺少：${lacking.join("、")}` : "")
    : `the best document holds ${share} of the question's weighted content words (${SUPPORT_THRESHOLD} needed)` + (lacking.length ? `; it lacks: ${lacking.join(", ")}` : "");
  return { ...base, answered, coverage, missingTerms, best: bestChunk, reason };
}

function chunkCredit(chunk: ContextChunk, terms: readonly string[]): number {
  const bag = termBag(`${chunk.hit.chunk.sectionPath.join(" ")}\n${chunk.hit.chunk.text}`);
  return terms.filter((t) => holds(bag, t)).length;
}

/** What an answer that abstains says, before the closest passages' markers. */
export function abstention(question: string): { text: string; closestLabel: string } {
  return HAN.test(question)
    ? { text: "所选知识库没有回答这个问题。", closestLabel: "最接近的段落（不是答案）：" }
    : { text: "The selected knowledge bases do not answer this question.", closestLabel: "Closest passages, not an answer:" };
}
