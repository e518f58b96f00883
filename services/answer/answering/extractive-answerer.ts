import { answerUnits, type AnswerUnit } from "./answer-units.ts";
import type { ContextChunk } from "./context-builder.ts";
import { HAN, holds, termBag, type TermBag } from "./content-terms.ts";
import { analyseQuestion, type AnswerCue } from "./question-analysis.ts";
import { namedTitles } from "./title-naming.ts";

export interface ExtractiveOptions {
  /** How many of the top context chunks to take sentences from; all by default. */
  maxChunks?: number;
  /**
   * How many sentences (or clauses) the answer holds at most; by default only the character budget
   * bounds it. A count would cut short sentences that together cost the reader less than one long
   * one: "陈荣捷卒于哪一年" opens on one year among several equally likely ones, and the year asked
   * for (1994年病逝于美国。) is the sixth short sentence, well within the budget.
   */
  maxSentences?: number;
  /**
   * The most characters an answer may run to: further sentences are added only within it. 250 for
   * a Chinese question (three or four lines), 300 for others (two or three English sentences). Most
   * answers stay far shorter: a sentence is added only when it may be the answer too, or answers
   * another part of the question.
   */
  budgetChars?: number;
  /**
   * The documents the evidence gate found to answer the question (evidence-support.ts), in rank
   * order. The answer opens in the highest-ranked of them that has a matching sentence, not in a
   * better-ranked document that only brushes the question: the answer then quotes the evidence
   * that let it be given. Absent or empty: the highest-ranked document with a matching sentence.
   */
  openIn?: readonly string[];
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

/** A sentence covering at least this share of the question the answer does not yet cover is added for it (from any document). */
const MIN_NEW_COVERAGE = 0.25;

/**
 * A further sentence of the same document scoring at least this share of the best one's score is
 * added as well: the evidence does not single out one sentence, so the reader gets both.
 */
const CLOSE_SCORE = 0.65;

/**
 * What a document's opening sentence adds to its score: a document's lead says what its subject
 * is (the definition, the occupation, the place, the maker), and among sentences that match a
 * question equally well it is the one that most often answers.
 */
const LEAD_BONUS = 0.1;

/**
 * The share of a Chinese question word's weight a sentence earns for holding its characters
 * without the word itself: Chinese words that share characters often share meaning (执导 and 导演,
 * 所著 and 作者, 栖息 and 生活习性 do not), so a partial match counts, for a fraction.
 */
const CHARACTER_CREDIT = 0.3;

/** Chinese sentences longer than this are quoted by the clause (，；). */
const LONG_SENTENCE_CHARS = 200;

interface Candidate {
  chunkIndex: number;
  unit: AnswerUnit;
  bag: TermBag;
  /** The chunk's section path (a document's title, its headings): what every sentence under it is about. */
  topic: TermBag;
  chars: number;
  score: number;
  /** The score before a lead's bonus: how well the sentence itself matches. */
  matched: number;
  /** The text normalised for comparing sentences across chunks. */
  key: string;
}

/**
 * An answer made without a language model. Sentences score by the share of the question they
 * cover: its content words, each weighted by its rarity among the retrieved sentences (IDF), so a
 * word every passage shares — often the subject's own name — decides little; words of the chunk's
 * title (section path) count for every sentence under it; a Chinese word not held whole counts in
 * part for the characters a sentence shares with it; when the question asks when, how many, where
 * or who, whether the sentence states a time, a quantity, a place or a name counts like a word;
 * and a document's opening sentence gets a small bonus. The answer opens with the best sentence of
 * the document whose title the question names, else of the highest-ranked document that has one;
 * it adds a sentence that scores nearly as well — of that document, of another the question names
 * too, or, the question naming none, of another the evidence gate found to answer — (so a clear best
 * answers alone, and an unclear one is shown with its rivals), or one of any document that covers a
 * part of the question not yet covered (of that document alone when the question names it), within
 * the character budget;
 * asked why, when, how many, where or who, it quotes the best sentence's neighbour that gives the
 * reason, time, quantity, place or name when the best gives none. Only whole sentences are quoted
 * (a chunk's edges can cut one), none twice (overlapping chunks repeat them) and each from the
 * chunk that shows most of its surroundings, a Chinese sentence longer than 200 characters by the
 * clause, and a code block whole after the sentence that introduces it.
 * Sources are numbered 1, 2, … in the order shown.
 */
export function extractiveAnswer(question: string, context: readonly ContextChunk[], options: ExtractiveOptions = {}): ExtractiveAnswer {
  const chinese = HAN.test(question);
  const none = chinese
    ? "摘录式回答（未配置语言模型）：所选知识库中没有与该问题相关的段落。"
    : "Extractive answer (no language model configured): no passage in the selected knowledge bases matches the question.";
  const budget = options.budgetChars ?? (chinese ? 250 : 300);

  const analysis = analyseQuestion(question);
  // The answer-type cue is one more thing to match, weighted by its rarity like a word.
  const CUE = "\u0000cue";
  const queryTerms = [...analysis.terms.filter((t) => !analysis.formWords.includes(t)), ...(analysis.cue ? [CUE] : [])];

  const chunks = context.slice(0, options.maxChunks ?? context.length);
  const opensDocument = (chunk: ContextChunk) => chunk.hit.chunk.index === 0 || chunk.hit.chunk.start === 0;
  const unitsOf = chunks.map((chunk) =>
    answerUnits(chunk.hit.chunk.text, { locale: chinese ? "zh" : "en", startsDocument: opensDocument(chunk), longSentenceChars: LONG_SENTENCE_CHARS }),
  );
  const topics = chunks.map((chunk) => termBag(chunk.hit.chunk.sectionPath.join(" ")));
  const candidates: Candidate[] = unitsOf.flatMap((list, chunkIndex) =>
    list
      .filter((u) => !u.fragment && u.kind !== "code")
      .map((unit) => ({ chunkIndex, unit, bag: termBag(unit.text), topic: topics[chunkIndex], chars: [...unit.text].length, score: 0, matched: 0, key: normalise(unit.text) })),
  );

  // How much of a question term a sentence holds, from 0 to 1. A sentence under a title that names
  // the question's subject need not repeat the name to be about it ("1994年病逝于美国。" under
  // 陈荣捷): terms the section path holds count for each of its sentences, so within one document
  // they decide nothing and the rest of the question decides.
  const creditOf = (c: Candidate, t: string): number => {
    if (t === CUE) return analysis.cue!.test(c.bag.text) ? 1 : 0;
    if (holds(c.bag, t) || holds(c.topic, t)) return 1;
    if (!HAN.test(t) || t.length < 2) return 0;
    const characters = [...t];
    const shared = characters.filter((ch) => c.bag.normalized.includes(ch) || c.topic.normalized.includes(ch)).length;
    return (CHARACTER_CREDIT * shared) / characters.length;
  };
  const credits = new Map(candidates.map((c) => [c, queryTerms.map((t) => creditOf(c, t))]));
  const weights = queryTerms.map((_, i) => {
    const df = candidates.reduce((sum, c) => sum + credits.get(c)![i], 0);
    return Math.log(1 + (candidates.length + 1) / (df + 0.5));
  });
  const total = weights.reduce((a, b) => a + b, 0) || 1;
  for (const c of candidates) {
    c.score = credits.get(c)!.reduce((sum, credit, i) => sum + credit * weights[i], 0) / total;
    c.matched = c.score;
    if (c.score > 0 && c.unit.sentence === 0 && opensDocument(chunks[c.chunkIndex])) c.score += LEAD_BONUS;
  }

  // A clause or a sentence cut short in one chunk is often whole in the next one: quote the whole.
  const matching = candidates.filter((c) => c.score > 0);
  const scored = matching.filter((c) => !matching.some((o) => o.score >= c.score && o.chars > c.chars && o.chars <= budget && o.key.includes(c.key)));
  if (scored.length === 0) return { text: none, found: false, sources: [] };
  // Retrieval weighed each chunk's every word against the question; a sentence's overlap is a
  // narrower view, so the answer opens in the highest-ranked document that has a matching
  // sentence — with the best sentence of all that document's chunks, since the answer may sit in
  // a neighbour of its best chunk.
  const documentRank = new Map<string, number>();
  for (const chunk of chunks) if (!documentRank.has(chunk.hit.chunk.documentId)) documentRank.set(chunk.hit.chunk.documentId, documentRank.size);
  const rankOf = (c: Candidate) => documentRank.get(chunks[c.chunkIndex].hit.chunk.documentId)!;
  const byScore = (a: Candidate, b: Candidate) => b.score - a.score || a.chunkIndex - b.chunkIndex || a.unit.order - b.unit.order;
  const supporting = new Set(options.openIn ?? []);
  const opening = scored.filter((c) => supporting.has(chunks[c.chunkIndex].hit.chunk.documentId));
  // A document whose title the question names is the one it asks about ("上海轨道交通18号线的编号"
  // under 上海轨道交通18号线, not the higher-ranked 17号线 that mentions 18号线): it opens the answer
  // when it has a matching sentence, ahead of retrieval's order.
  const askedAbout = namedTitles(question, chunks.map((chunk) => chunk.hit.chunk.sectionPath));
  const namedFirst = (a: Candidate, b: Candidate) => Number(askedAbout[b.chunkIndex]) - Number(askedAbout[a.chunkIndex]);
  const first = [...(opening.length > 0 ? opening : scored)].sort((a, b) => namedFirst(a, b) || rankOf(a) - rankOf(b) || byScore(a, b))[0];

  // A sentence scoring nearly as well as the best one's own match (the lead's bonus decides which
  // opens, not what else is shown) may be where the answer is, and the reader gets it too: one of
  // the same document; of another the question names as well (homonyms: 雅芳河 of Bristol and of
  // Hampshire, it cannot say which it means); or, the question naming none ("他司职什么位置？"), of
  // another the evidence gate found to answer. Any document's sentence is added for a part of the
  // question the answer does not yet cover, unless the question names the document it opens in.
  const documentOf = (c: Candidate) => chunks[c.chunkIndex].hit.chunk.documentId;
  const rivalsFirst = (c: Candidate) =>
    rankOf(c) === rankOf(first) ||
    (askedAbout[first.chunkIndex] && askedAbout[c.chunkIndex]) ||
    (!askedAbout[first.chunkIndex] && supporting.has(documentOf(first)) && supporting.has(documentOf(c)));
  const chosen: Candidate[] = [first];
  // Asked why, a text states the fact and gives its reason beside it: the sentence that best
  // matches the question restates it ("雄蛛交配时会很小心的走近雌蛛。"), and when it holds no cause
  // or purpose of its own, the neighbour that does is quoted with it — or, when neither does, the
  // one before a sentence opening with "so" (因此…) and the one after any other ("若不小心，就会被
  // 雌蛛吃下。"). Asked when, how many, where or who, the same holds: a sentence restating the
  // question without the time, quantity, place or name asked for ("赛后，占旭刚正式结束运动生涯。")
  // often refers back to the one before it, which states it ("2004年，占旭刚第三次参加奥运会…"),
  // or leads on to the one after; that neighbour is quoted with it, when one does.
  const cue = analysis.cue;
  // Where a chunk shows the sentence, whole or cut by the chunk's edge into a part that still
  // begins or ends it (a long sentence there split into its clauses): the neighbour after is the
  // one after a piece ending it, the neighbour before the one before a piece beginning it.
  const placesOf = (fact: Candidate, side: "start" | "end") =>
    unitsOf.flatMap((units, chunkIndex) =>
      units.filter((u) => sharesEdge(normalise(u.text), fact.key, side)).map((u) => ({ chunkIndex, order: u.order, sentence: u.sentence })),
    );
  const besideFirst = cue && cue.kind !== "identity" && !cue.test(first.unit.text) ? neighbourGiving(first, candidates, cue, placesOf) : undefined;
  if (besideFirst && (options.maxSentences ?? Infinity) > 1 && first.chars + besideFirst.chars <= budget) chosen.push(besideFirst);
  const covered = queryTerms.map((_, i) => Math.max(...chosen.map((c) => credits.get(c)![i])));
  const newCoverage = (c: Candidate) => credits.get(c)!.reduce((sum, credit, i) => sum + Math.max(0, credit - covered[i]) * weights[i], 0) / total;
  let length = chosen.reduce((sum, c) => sum + c.chars, 0);
  for (const next of [...scored].sort(byScore)) {
    if (chosen.length >= (options.maxSentences ?? Infinity)) break;
    if (length + next.chars > budget || chosen.some((c) => repeats(c.key, next.key))) continue;
    const close = rivalsFirst(next) && next.score >= CLOSE_SCORE * first.matched;
    if (!close && newCoverage(next) < MIN_NEW_COVERAGE) continue;
    // A question naming the document it asks about is about that document's subject: another
    // document's sentence covering its other words (卒于… under another person, for 陈荣捷卒于哪一年)
    // speaks of something else. Unnamed, the question's subject may be spread over documents.
    if (askedAbout[first.chunkIndex] && !askedAbout[next.chunkIndex]) continue;
    chosen.push(next);
    length += next.chars;
    credits.get(next)!.forEach((credit, i) => (covered[i] = Math.max(covered[i], credit)));
  }

  // Overlapping chunks hold the same sentence: cite the one that shows most of what surrounds it,
  // where the reader following the citation finds its context (and often the answer beside it).
  const margin = (c: Candidate) => Math.min(c.unit.order, unitsOf[c.chunkIndex].length - 1 - c.unit.order);
  const shown = chosen.map((c) => candidates.filter((o) => o.key === c.key).sort((a, b) => margin(b) - margin(a) || a.chunkIndex - b.chunkIndex)[0]);
  shown.sort((a, b) => a.chunkIndex - b.chunkIndex || a.unit.order - b.unit.order);

  const sources: ContextChunk[] = [];
  const pieces: string[] = [];
  for (const { chunkIndex, unit } of shown) {
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

/** Sentences that draw a consequence from the one before them. */
const CONSEQUENCE_OPENING = /^(?:因此|所以|因而|故而|于是|故|therefore\b|thus\b|so\b(?!-)|hence\b|as a result\b)/i;

/**
 * The whole sentence or clause beside `fact` that gives what the question's cue asks for: the one
 * before or after it in any chunk quoting it (overlapping chunks show different neighbours). For a
 * reason, the one the connective points to comes first (after, or before a sentence opening with
 * "so"), and is quoted even when neither states a cause; for the other kinds, the one before comes
 * first, and one is quoted only when it states the kind asked for.
 */
function neighbourGiving(
  fact: Candidate,
  candidates: readonly Candidate[],
  cue: AnswerCue,
  placesOf: (fact: Candidate, side: "start" | "end") => { chunkIndex: number; order: number; sentence: number }[],
): Candidate | undefined {
  const reason = cue.kind === "reason";
  const step = reason ? (CONSEQUENCE_OPENING.test(fact.unit.text) ? -1 : 1) : -1;
  const at = (offset: number) =>
    placesOf(fact, offset > 0 ? "end" : "start")
      .map((q) => candidates.find((c) => c.chunkIndex === q.chunkIndex && c.unit.order === q.order + offset))
      .filter((c): c is Candidate => c !== undefined);
  // A clause's sentence runs on past its neighbours (提出希望…更换主持，不再…续约，因他不能接受…):
  // the nearest further clause of it that states what is asked.
  const along = (direction: number) =>
    placesOf(fact, direction > 0 ? "end" : "start").flatMap((q) =>
      candidates
        .filter((c) => c.chunkIndex === q.chunkIndex && c.unit.kind === "clause" && c.unit.sentence === q.sentence && (c.unit.order - q.order) * direction > 1)
        .sort((a, b) => Math.abs(a.unit.order - q.order) - Math.abs(b.unit.order - q.order)),
    );
  const pointed = at(step);
  const states = (c: Candidate) => cue.test(c.unit.text);
  return [...pointed, ...at(-step)].find(states) ?? [...along(step), ...along(-step)].find(states) ?? (reason ? pointed[0] : undefined);
}

/**
 * Whether a unit's text is the sentence, or a part of it at the given edge long enough (six
 * characters, punctuation aside) that holding the same words there is no coincidence.
 */
function sharesEdge(piece: string, sentence: string, side: "start" | "end"): boolean {
  if (piece === sentence) return true;
  return piece.length >= 6 && piece.length < sentence.length && (side === "start" ? sentence.startsWith(piece) : sentence.endsWith(piece));
}

/** A clause shown alone ends as a sentence does, not with the comma that led on to the next one. */
function asSentence(unit: AnswerUnit, chinese: boolean): string {
  // A document whose title was left out of its text can open with the comma that followed it ("，又名…").
  const text = unit.text.replace(/^[，,；;：:、]+\s*/, "");
  if (unit.kind !== "clause" || /[。！？.!?]$/.test(text)) return text;
  return text.replace(/[，；、]+$/, "") + (chinese ? "。" : ".");
}

/** Whether one normalised text says what the other already does: overlapping chunks repeat sentences, sometimes one inside another. */
function repeats(x: string, y: string): boolean {
  return x === y || x.includes(y) || y.includes(x);
}

function normalise(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/[\s\p{P}]+/gu, "");
}

