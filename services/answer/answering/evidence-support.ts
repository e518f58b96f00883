// Whether the retrieved evidence answers the question at all. Retrieval always returns its best
// candidates, and an answerer handed them quotes or paraphrases something fluent and cited whatever
// the question was; the reader cannot tell a real answer from the least bad passage. The rule here
// is the one a person applies when skimming: a passage answers a question only when it states
// something about what the question names. Every content word of the question is weighted by how
// rare it is in the language (jieba's IDF table, for Chinese) and among the documents retrieved (a
// word they all share — "职业", "year" — tells nothing apart; the name of the question's subject
// is usually held by one document, or by none when no document is about it) — by the language
// alone when keyword and vector search agree on the first passage —, and the evidence supports an
// answer when one sentence of a retrieved document, read under its title, holds at least half of
// that weight. Half is the
// principle, not a fitted figure: the passage must hold more of what the question asks about than
// it misses. Measured in docs/EVALUATION.md ("Abstention"), decided before the held-out questions
// were run.
import { HAN, holds, segmentTags, termBag, type TermBag } from "./content-terms.ts";
import type { ContextChunk } from "./context-builder.ts";
import { analyseQuestion } from "./question-analysis.ts";
import { languageRarity } from "./language-rarity.ts";

/** A document's passages must hold at least this share of the question's weighted content words. */
export const SUPPORT_THRESHOLD = 0.5;

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
  /** The documents whose best sentence holds at least the threshold, in rank order: the ones that answer. */
  supportingDocumentIds: string[];
}

/**
 * Judges the context an answer would be made from. `searched` is what retrieval searched for when
 * it differs from the question (a follow-up's rewrite, or the follow-up with the previous
 * question's words): the follow-up is judged on its own words when it has any — the carried words
 * only steer the search, so "and who do I call?" is not answered with the previous subject, and a
 * change of subject is judged on the new one — and on the searched words when it names nothing
 * itself ("and where?").
 */
export function judgeEvidence(question: string, context: readonly ContextChunk[], searched: string = question): EvidenceJudgement {
  const chinese = HAN.test(question);
  const analysed = analyseQuestion(question);
  // The words naming the kind of answer (科目 in 松鸦属于什么科目) are not asked of the passage: the
  // one answering states the answer (鸦科) without them — unless they are all the question names.
  const own = analysed.answerTypeWords.length < analysed.terms.length ? analysed.terms.filter((t) => !analysed.answerTypeWords.includes(t)) : analysed.terms;
  const questionTerms = [...new Set(own.length > 0 || searched === question ? own : analyseQuestion(searched).terms)];
  const base = { threshold: SUPPORT_THRESHOLD, questionTerms };
  if (context.length === 0) {
    return { ...base, answered: false, coverage: 0, missingTerms: questionTerms, supportingDocumentIds: [], reason: chinese ? "没有检索到任何段落" : "nothing was retrieved" };
  }
  if (questionTerms.length === 0) {
    // Nothing to match: the question names no subject ("and then?"), so no passage can be shown
    // to be about it.
    return { ...base, answered: false, coverage: 0, missingTerms: [], supportingDocumentIds: [], best: context[0], reason: chinese ? "问题中没有可供匹配的实词" : "the question names nothing a passage could be matched on" };
  }

  // A document's retrieved chunks, each sentence with its chunk's title: the question is written
  // about one statement, so a document answers it when one of its sentences — read under its
  // title, which need not be repeated ("1994年病逝于美国。" under 陈荣捷) — holds what it asks,
  // not when its words are scattered over unrelated sentences of a document on a neighbouring subject.
  const documents = new Map<string, { chunks: ContextChunk[]; sentences: TermBag[] }>();
  for (const chunk of context) {
    const id = chunk.hit.chunk.documentId;
    const doc = documents.get(id) ?? { chunks: [], sentences: [] };
    doc.chunks.push(chunk);
    const title = chunk.hit.chunk.sectionPath.join(" ");
    for (const sentence of sentences(chunk.hit.chunk.text)) doc.sentences.push(termBag(`${title}\n${sentence}`));
    documents.set(id, doc);
  }
  const creditOf = (bag: TermBag, term: string): number => {
    if (holds(bag, term)) return 1;
    if (!HAN.test(term) || term.length < 2) return 0;
    // jieba's segmentation of a short question can join a name to the character after it in a
    // way the question analysis does not undo (史继偕著, 下乙二醛): a Chinese word counts for the
    // longest part of two characters or more that the sentence holds. Scattered single characters
    // count for nothing: 广 of 广东 and 茂 of 茂名 do not make a sentence about 广茂铁路.
    const characters = [...term];
    return longestHeldPart(characters, bag.normalized) / characters.length;
  };
  const docCredits = (sentences: TermBag[]) => sentences.map((bag) => questionTerms.map((t) => creditOf(bag, t)));
  const docs = [...documents.values()];
  const sentenceCredits = docs.map((doc) => docCredits(doc.sentences));
  // A word weighs what it tells apart. In the language at large: a word every text uses (主要,
  // 地方, 属于) says less than a name or a term, however the passages at hand phrase it. And among
  // the retrieved documents, as BM25's IDF (a document holds a word as well as its best sentence
  // does): a word they all share — the subject of an article whose other paragraphs were
  // retrieved — does not single one out, and a word none holds weighs most. That second rarity is
  // there because retrieval did not single a passage out; when keyword and vector search, two
  // independent readings of the question, both rank the same passage first, retrieval has, and
  // a word is weighed by the language alone — where the language has a table (Chinese): without
  // one, the retrieved passages are all there is to weigh by. A word none holds weighs most because
  // it names what no passage is about; a verb, adjective or adverb none holds (居住 where the text
  // says 栖居, 接收 for 接受) is more often said in other words, so it weighs as one a single
  // document holds — where a tagger says which words those are (jieba, for Chinese).
  const agreed = retrievalAgrees(context);
  const tagOf = new Map(segmentTags(question.normalize("NFKC").toLowerCase()).map((t) => [t.word, t.tag]));
  const weights = questionTerms.map((term, i) => {
    const language = languageRarity(term);
    if (agreed && language !== undefined) return language;
    const held = sentenceCredits.reduce((sum, each) => sum + Math.max(0, ...each.map((c) => c[i])), 0);
    const df = paraphrasable(term, tagOf) ? Math.max(held, 1) : held;
    return (language ?? 1) * Math.log(1 + (docs.length + 1) / (df + 0.5));
  });
  const total = weights.reduce((a, b) => a + b, 0);
  const coverageOf = (c: number[]) => c.reduce((sum, credit, i) => sum + credit * weights[i], 0) / total;
  // Each document by its best sentence.
  const credits = sentenceCredits.map((each) => each.reduce((best, c) => (coverageOf(c) > coverageOf(best) ? c : best), questionTerms.map(() => 0)));
  const coverages = credits.map(coverageOf);
  // The best document, ties to the higher-ranked one (the map keeps rank order).
  const bestDoc = coverages.reduce((best, c, i) => (c > coverages[best] ? i : best), 0);
  const coverage = coverages[bestDoc];
  const held = credits[bestDoc];
  // The chunk of that document holding most of the question, for "closest" and the record.
  const bestChunk = [...docs[bestDoc].chunks].sort((a, b) => chunkCredit(b, questionTerms) - chunkCredit(a, questionTerms))[0];
  const missingTerms = questionTerms.filter((_, i) => sentenceCredits.every((each) => each.every((c) => c[i] === 0)));
  const answered = coverage >= SUPPORT_THRESHOLD;
  const lacking = questionTerms.filter((_, i) => held[i] < 1);
  const share = coverage.toFixed(2);
  const reason = chinese
    ? `最相关的文档覆盖问题加权实词的 ${share}（需要 ${SUPPORT_THRESHOLD}）` + (lacking.length ? `；缺少：${lacking.join("、")}` : "")
    : `the best document holds ${share} of the question's weighted content words (${SUPPORT_THRESHOLD} needed)` + (lacking.length ? `; it lacks: ${lacking.join(", ")}` : "");
  const documentIds = [...documents.keys()];
  const supportingDocumentIds = documentIds.filter((_, i) => coverages[i] >= SUPPORT_THRESHOLD);
  return { ...base, answered, coverage, missingTerms, best: bestChunk, supportingDocumentIds, reason };
}

/**
 * Whether the first passage leads both the keyword and the vector list, among passages of more than
 * one document: hybrid search only (one list has no such agreement), and with a single document
 * retrieved both lists rank it first whatever the question, so that is no choice.
 */
function retrievalAgrees(context: readonly ContextChunk[]): boolean {
  const explain = context[0]?.hit.explain;
  const documents = new Set(context.map((c) => c.hit.chunk.documentId));
  return !!explain && explain.bm25Rank === 1 && explain.vectorRank === 1 && documents.size > 1;
}

/** Sentences of a chunk, cut at sentence ends and line breaks; the chunk's edges may cut the first and last. */
function sentences(text: string): string[] {
  return text.split(/(?<=[。！？!?；;])|(?<=\.)\s+|\n+/u).map((s) => s.trim()).filter(Boolean);
}

/** Length of the longest run of the word's characters found together in the text. */
function longestHeldPart(characters: readonly string[], text: string): number {
  for (let length = characters.length - 1; length >= 2; length--) {
    for (let start = 0; start + length <= characters.length; start++) if (text.includes(characters.slice(start, start + length).join(""))) return length;
  }
  return 0;
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

/** A verb, adjective or adverb by jieba's tag (not a verbal or adjectival noun: 管理 in 管理区 names a thing). */
function paraphrasable(term: string, tagOf: Map<string, string>): boolean {
  const tag = tagOf.get(term) ?? "n";
  return /^(v|a|d)/.test(tag) && tag !== "vn" && tag !== "an";
}
