import { answerUnits, type AnswerUnit } from "./answer-units.ts";
import type { ContextChunk } from "./context-builder.ts";
import { HAN, holds as holdsTerm, termBag, type TermBag } from "./content-terms.ts";
import { analyseQuestion } from "./question-analysis.ts";

export interface ExtractiveOptions {
  /** How many of the top context chunks to take sentences from; all by default. */
  maxChunks?: number;
  /** How many sentences (or clauses) the answer holds at most. */
  maxSentences?: number;
  /**
   * Characters a reader is asked to take in: further sentences are added only within it. 100 for
   * a Chinese question (two lines of text), 300 for others (two or three English sentences).
   */
  budgetChars?: number;
}

export interface ExtractiveAnswer {
  /** The answer with [n] markers after each sentence; run it through the CitationMapper like model output. */
  text: string;
  /** False when no passage matched, so the text only says that. */
  found: boolean;
  /** The context chunks quoted, in the order first shown: the text's [n] cites sources[n - 1]. */
  sources: ContextChunk[];
}

/** The line an extractive answer opens with, so a reader knows no model wrote it; English, then Chinese. */
export const EXTRACTIVE_NOTICES = ["Extractive answer (no language model configured), quoted from the sources:", "摘录式回答（未配置语言模型），摘自来源："] as const;

/** A sentence from another document must cover at least this share of the question the answer does not yet cover. */
const MIN_NEW_COVERAGE = 0.25;

/** What being next to the first sentence adds to a further sentence's coverage score. */
const NEIGHBOUR_BONUS = 0.2;

interface Candidate {
  chunkIndex: number;
  unit: AnswerUnit;
  bag: TermBag;
  /** The chunk's section path (a document's title, its headings): what every sentence under it is about. */
  topic: TermBag;
  chars: number;
  score: number;
}

/**
 * An answer made without a language model. Sentences score by the share of the question they
 * cover: its content words, each weighted by its rarity among the retrieved sentences (IDF), so a
 * word every passage shares — often the subject's own name — decides little; words of the chunk's
 * title (section path) count for every sentence under it; and, when the question asks when, how
 * many, where or who, whether the sentence states a time, a quantity, a place or a name. The answer
 * opens with the best sentence of the highest-ranked document that has one, then adds the next
 * best of that document that still fit the reading budget (another document's only if it covers
 * a part of the question not yet covered). Only whole sentences are quoted (a chunk's edges
 * can cut one), none twice (overlapping chunks repeat them), a Chinese sentence longer than twice
 * the budget by the clause, and a code block whole after the sentence that introduces it. Sources
 * are numbered 1, 2, … in the order shown.
 */
export function extractiveAnswer(question: string, context: readonly ContextChunk[], options: ExtractiveOptions = {}): ExtractiveAnswer {
  const chinese = HAN.test(question);
  const none = chinese
    ? "摘录式回答（未配置语言模型）：所选知识库中没有与该问题相关的段落。"
    : "Extractive answer (no language model configured): no passage in the selected knowledge bases matches the question.";
  const budget = options.budgetChars ?? (chinese ? 100 : 300);

  const analysis = analyseQuestion(question);
  // The answer-type cue is one more thing to match, weighted by its rarity like a word.
  const CUE = "\u0000cue";
  const queryTerms = [...analysis.terms, ...(analysis.cue ? [CUE] : [])];
  const cueHeld = new Map<TermBag, boolean>();
  const holdsCue = (bag: TermBag) => cueHeld.get(bag) ?? cueHeld.set(bag, analysis.cue!.test(bag.text)).get(bag)!;
  const holds = (bag: TermBag, t: string) => (t === CUE ? holdsCue(bag) : holdsTerm(bag, t));

  const chunks = context.slice(0, options.maxChunks ?? context.length);
  const unitsOf = chunks.map((chunk) =>
    answerUnits(chunk.hit.chunk.text, {
      locale: chinese ? "zh" : "en",
      startsDocument: chunk.hit.chunk.index === 0 || chunk.hit.chunk.start === 0,
      longSentenceChars: budget * 2,
    }),
  );
  const topics = chunks.map((chunk) => termBag(chunk.hit.chunk.sectionPath.join(" ")));
  const candidates: Candidate[] = unitsOf.flatMap((list, chunkIndex) =>
    list
      .filter((u) => !u.fragment && u.kind !== "code")
      .map((unit) => ({ chunkIndex, unit, bag: termBag(unit.text), topic: topics[chunkIndex], chars: [...unit.text].length, score: 0 })),
  );
  // A sentence under a title that names the question's subject need not repeat the name to be
  // about it ("1994年病逝于美国。" under 陈荣捷): terms the section path holds count for each of its
  // sentences, so within one document they decide nothing and the rest of the question decides.
  const has = (c: Candidate, t: string) => holds(c.bag, t) || (t !== CUE && holds(c.topic, t));
  const weight = new Map(
    queryTerms.map((t) => {
      const df = candidates.filter((c) => has(c, t)).length;
      return [t, Math.log(1 + (candidates.length + 1) / (df + 0.5))];
    }),
  );
  const total = [...weight.values()].reduce((a, b) => a + b, 0) || 1;
  for (const c of candidates) c.score = queryTerms.filter((t) => has(c, t)).reduce((sum, t) => sum + weight.get(t)!, 0) / total;

  const scored = candidates.filter((c) => c.score > 0);
  if (scored.length === 0) return { text: none, found: false, sources: [] };
  // Retrieval weighed each chunk's every word against the question; a sentence's overlap is a
  // narrower view, so the answer opens in the highest-ranked document that has a matching
  // sentence — with the best sentence of all that document's chunks, since the answer may sit in
  // a neighbour of its best chunk.
  const documentRank = new Map<string, number>();
  for (const chunk of chunks) if (!documentRank.has(chunk.hit.chunk.documentId)) documentRank.set(chunk.hit.chunk.documentId, documentRank.size);
  const rankOf = (c: Candidate) => documentRank.get(chunks[c.chunkIndex].hit.chunk.documentId)!;
  const first = [...scored].sort((a, b) => rankOf(a) - rankOf(b) || b.score - a.score || a.chunkIndex - b.chunkIndex || a.unit.order - b.unit.order)[0];

  // Further sentences come from the same document, which says more about the same subject; another
  // document is quoted only for a part of the question the answer does not yet cover. A sentence
  // next to the first one gets a little more: it often finishes what the first began (the clause
  // after "前身为", the sentence after the one naming the subject).
  const chosen: Candidate[] = [first];
  const covered = new Set(queryTerms.filter((t) => has(first, t)));
  const newCoverage = (c: Candidate) => queryTerms.filter((t) => !covered.has(t) && has(c, t)).reduce((sum, t) => sum + weight.get(t)!, 0) / total;
  const beside = (c: Candidate) => (c.chunkIndex === first.chunkIndex && Math.abs(c.unit.order - first.unit.order) === 1 ? NEIGHBOUR_BONUS : 0);
  let length = first.chars;
  for (const next of scored.sort((a, b) => b.score + beside(b) - a.score - beside(a) || a.chunkIndex - b.chunkIndex || a.unit.order - b.unit.order)) {
    if (chosen.length >= (options.maxSentences ?? 3)) break;
    if (length + next.chars > budget || chosen.some((c) => repeats(c.unit.text, next.unit.text))) continue;
    if (rankOf(next) !== rankOf(first) && newCoverage(next) < MIN_NEW_COVERAGE) continue;
    chosen.push(next);
    length += next.chars;
    for (const t of queryTerms) if (has(next, t)) covered.add(t);
  }
  chosen.sort((a, b) => a.chunkIndex - b.chunkIndex || a.unit.order - b.unit.order);

  const sources: ContextChunk[] = [];
  const pieces: string[] = [];
  for (const { chunkIndex, unit } of chosen) {
    if (!sources.includes(chunks[chunkIndex])) sources.push(chunks[chunkIndex]);
    const marker = `[${sources.indexOf(chunks[chunkIndex]) + 1}]`;
    pieces.push(`${asSentence(unit, chinese)}${chinese ? "" : " "}${marker}`);
    // A sentence that ends in a colon introduces what follows it: the code block after it, whole.
    const following = unitsOf[chunkIndex][unit.order + 1];
    if (/[:：]$/.test(unit.text) && following?.kind === "code" && !following.fragment) pieces.push(`\n\n${following.text}\n\n`);
  }
  const body = pieces.reduce((text, piece) => (!text || text.endsWith("\n") || piece.startsWith("\n") || chinese ? text + piece : `${text} ${piece}`), "");
  return { text: `${EXTRACTIVE_NOTICES[chinese ? 1 : 0]}\n\n${body.trim()}`, found: true, sources };
}

/** A clause shown alone ends as a sentence does, not with the comma that led on to the next one. */
function asSentence(unit: AnswerUnit, chinese: boolean): string {
  if (unit.kind !== "clause" || /[。！？.!?]$/.test(unit.text)) return unit.text;
  return unit.text.replace(/[，；、]+$/, "") + (chinese ? "。" : ".");
}

/** Whether one text says what the other already does: overlapping chunks repeat sentences, sometimes one inside another. */
function repeats(a: string, b: string): boolean {
  const x = normalise(a);
  const y = normalise(b);
  return x === y || x.includes(y) || y.includes(x);
}

function normalise(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/[\s\p{P}]+/gu, "");
}

