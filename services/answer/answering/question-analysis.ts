// What a question asks for, in the terms a sentence is scored by: its content words (each counted
// once) and, when its question word asks for a time, a quantity, a place, a person or a reason, a
// cue that the answering sentence holds one.
import { HAN, isStopWord, namedEntityTags, segmentTags, terms } from "./content-terms.ts";
import { inLanguageTable } from "./language-rarity.ts";

/** A kind of answer a question word asks for, and how a sentence that gives one looks. */
export interface AnswerCue {
  kind: "time" | "quantity" | "place" | "person" | "identity" | "reason";
  /** Whether a sentence states an answer of that kind. */
  test(text: string): boolean;
}

const TIME_QUESTION = /哪一?年|何年|哪个?年代|什么时[候间]|何时|哪一?天|几月|几号|\bwhen\b|\bwhat (year|date|time)\b|\bhow long ago\b/i;
const TIME_ANSWER = /\d+\s*(年|月|日|世纪)|[一二三四五六七八九十〇零百千]+(年|月|日|世纪)|\b(1[0-9]{3}|20[0-9]{2})\b|\b(january|february|march|april|may|june|july|august|september|october|november|december)\b/i;
const QUANTITY_QUESTION = /多少|几[个条层种位次名座只头本家所张部项届辆架艘度岁年天人]|多[长大高远重深宽久]|\bhow (many|much|long|far|big|tall|old|high)\b/i;
const QUANTITY_ANSWER = /\d|[一二两三四五六七八九十百千万亿]+[个条层种位次名座只头本家所张部项届辆架艘度岁年天人米里吨]|\b(one|two|three|four|five|six|seven|eight|nine|ten|hundred|thousand|million|billion)\b/i;
const PLACE_QUESTION = /哪里|哪儿|何处|何地|在哪|什么地方|哪个(国家|城市|省|地区|地方)|\bwhere\b/i;
const PERSON_QUESTION = /谁|哪位|何人|\bwho(m|se)?\b/i;
// "Why" and "for what purpose" are answered by a sentence that gives a cause or a purpose, and
// a sentence that only restates what the question asks about gives neither: the connectives that
// introduce one (因为, 由于, 为了, because, in order to) are how a reader finds it.
const REASON_QUESTION = /为什么|为何|为啥|因何|何故|何以|缘何|什么原因|原因(?:是什么|为何|何在)|什么目的|目的(?:是什么|为何)|\bwhy\b|\bfor what (?:reason|purpose)\b|\bwhat (?:is|was|are|were) the (?:reasons?|causes?|purposes?)\b/i;
const REASON_ANSWER = /(?<!基)因(?![此而])|由于|为由|缘故|所以|故而|以致|导致|致使|为了|以便|以免|旨在|为此|否则|\b(?:because|due to|owing to|as a result|so that|in order to|therefore|thus|hence|caused? by|the reason)\b/i;
// English names and places: a capitalised word not opening the sentence.
const ENGLISH_NAME = /\s[A-Z][a-z]+/;
// The words that ask: they name no topic, and a sentence holding them ("哪一年" in a passage) does
// not answer for it.
const QUOTED = /[“”"「『]([^“”"「」『』]{2,20})[“”"」』]/g;
const QUESTION_WORDS = /^(哪|几|多少|什么|谁|何)|^(为何|因何|缘何|为啥)$|^(一年|几个|几条|几种|几层|几位|几次|哪个|哪些|哪里|哪儿|哪家|哪一|多[长大高远重深宽久])$/;

// A question that asks what its subject is — its occupation, definition, nature, identity —
// names the kind of answer ("职业", "定义", "occupation") and not something the answering sentence
// says: "邹游，中国足球运动员" states an occupation without the word. Such a question is answered by
// a sentence that predicates something of the subject: the subject followed (after a bracketed
// aside) by a copula or an appositive comma.
const FORM_WORDS = /^(职业|定义|身份|性质|本质|概念|类型|种类|类别|definition|meaning|occupation|profession|job|nature|kind|type|sort|identity)$/;
const IDENTITY_QUESTIONS: readonly RegExp[] = [
  /^\s*(?:什么|何)(?:是|叫做?|为)(?<subject>[^，,？?]+?)\s*[？?]?\s*$/,
  /^\s*(?<subject>[^，,？?]+?)的(?:职业|定义|含义|涵义|意思|身份|性质|本质|概念)(?:是|为)(?:什么|何)\s*[？?]?\s*$/,
  /^\s*(?<subject>[^，,？?]+?)(?:是|为|指|是指|指的是|属于)(?:一(?:个|种|位|家|名|类))?(?:什么|谁|何人|何物|哪一?(?:种|类|位))(?:样的)?(?:(?:职业|身份|性质|类型|种类)(?:的[^，,？?]{1,4})?|人物?|东西|意思)?\s*[？?]?\s*$/,
  /^\s*(?<subject>[^，,？?]+?)(?:是|为|属于)(?:一(?:个|种|位|家|名|类))?(?:什么|哪一?种)(?:职业|身份|性质|类型|种类)的[^，,？?]{1,4}\s*[？?]?\s*$/,
  /^\s*what (?:is|was) the (?:definition|meaning|occupation|profession|job|nature|identity) of (?<subject>.+?)\s*\??\s*$/i,
  /^\s*(?:what|who) (?:is|are|was|were) (?<subject>(?!the (?:definition|meaning|occupation|profession|job|nature|identity) of\b)[^,?]+?)\s*\??\s*$/i,
  /^\s*what (?:kind|type|sort) of [^,?]+? (?:is|was|are|were) (?<subject>[^,?]+?)\s*\??\s*$/i,
  /^\s*what (?:does|did) (?<subject>[^,?]+?) (?:mean|do for a living)\s*\??\s*$/i,
];
// An encyclopedia lead may have lost its copula in extraction ("自在奥义书（IAST：…）婆罗门教诸奥义书中
// 最短的之一"): a bracketed aside right after the subject marks the predication by itself.
const COPULA = "(?:是|为|乃|系|即|指|，|,|：|:|又称|又名|亦称|\\bis\\b|\\bwas\\b|\\bare\\b|\\bwere\\b|\\brefers to\\b|\\bmeans\\b)";
const COPULA_AFTER = `\\s*(?:(?:（[^）]*）|\\([^)]*\\))\\s*${COPULA}?|${COPULA})`;

export interface QuestionAnalysis {
  /** Content words, minus question words and minus words inside a longer one (路德 in 路德维希). */
  terms: string[];
  /**
   * Of the terms, the ones that name the kind of answer an identity question asks for (职业 in
   * 邹游的职业是什么): the answering sentence need not hold them.
   */
  formWords: string[];
  /**
   * Of the terms, the ones naming what kind of answer is asked for: the noun the question word
   * governs (什么科目, 有何作用, which office) or the attribute asked of the subject (X的特点是什么).
   * A passage stating the answer need not use them (松鸦是鸦科的鸟 answers 松鸦属于什么科目).
   */
  answerTypeWords: string[];
  cue?: AnswerCue;
}

/** The subject of a question asking what something is, or undefined for any other question. */
export function identitySubject(question: string): string | undefined {
  const text = question.normalize("NFKC").trim();
  for (const pattern of IDENTITY_QUESTIONS) {
    const subject = pattern.exec(text)?.groups?.subject?.trim();
    // "X的Y是什么", "the fare for adults on the ferry": the question asks for an attribute of X, not what X is.
    const attribute = /的|\b(of|for|in|on|at|to|from|with|by|about|after|before|during)\b/i;
    if (subject && !/(什么|哪|谁|何|几|多少)/.test(subject) && (pattern === IDENTITY_QUESTIONS[1] || pattern === IDENTITY_QUESTIONS[4] || !attribute.test(subject))) {
      return subject.replace(/^(?:an?|the)\s+/i, "");
    }
  }
  return undefined;
}

/**
 * A name, not a description: capitalised English, or Chinese whose every word jieba tags as a
 * person's or a place's name (nr, ns) or does not know at all (x: mostly names, 猎骄靡, 尚恩).
 */
function isName(text: string): boolean {
  if (!HAN.test(text)) return /^[A-Z]/.test(text);
  const words = segmentTags(text.normalize("NFKC")).filter((t) => /[\p{L}\p{N}]/u.test(t.word));
  return words.length > 0 && words.every((t) => /^(n[rs]|x$)/.test(t.tag));
}

/** Whether jieba reads a word of two to four Han characters in the text as unknown (x): mostly a name. */
function holdsUnknownName(text: string): boolean {
  return segmentTags(text.normalize("NFKC")).some((t) => t.tag === "x" && /^\p{Script=Han}{2,4}$/u.test(t.word));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * jieba joins a run of characters its dictionary lacks into one word, and in a question that run is
 * often a name with the function character after it (司马晏是谁 → 晏是, 东关街有多长 → 街有,
 * 尚恩有什么爱好 → 尚恩有): a passage holds the name, never the join. A word the language's table
 * lacks loses a function character at either end (是, 有, 在, 以, 会 … from the stop list); a
 * word of the language (内有 is in the table) is kept as jieba cut it.
 */
function unglued(word: string): string {
  if (!HAN.test(word) || word.length < 2 || inLanguageTable(word)) return word;
  let start = 0;
  let end = word.length;
  if (isStopWord(word[end - 1])) end--;
  if (end - start > 1 && isStopWord(word[start])) start++;
  return end > start ? word.slice(start, end) : word;
}

export function analyseQuestion(question: string): QuestionAnalysis {
  const words = [...new Set(terms(question).map(unglued))].filter((t) => !(HAN.test(t) && QUESTION_WORDS.test(t)));
  // jieba's search mode also yields the parts of a compound; counting both would weigh a name
  // like 路德维希·普朗特 four times over the word the question is really about.
  // A quoted word is asked about as written (刺角瓜为什么又叫“角瓜”): it stays a word of its own
  // even inside a longer one. A quoted character (「唐」) names a character, not a subject.
  const quoted = new Set([...question.normalize("NFKC").toLowerCase().matchAll(QUOTED)].map((m) => m[1].trim()).filter((q) => words.includes(q)));
  const kept = words.filter((t) => quoted.has(t) || !words.some((other) => other !== t && other.length > t.length && other.includes(t)));
  // A place or a person is recognised by jieba's part-of-speech tags (ns, nr) in Chinese. A name
  // its dictionary lacks is tagged unknown (x), not a person (江口寿史 → 江口/ns 寿史/x, 丁善玺/x):
  // asked who, a sentence holding a word of two to four Han characters jieba does not know may
  // name one.
  const named = (tag: "ns" | "nr") => (text: string) => (HAN.test(text) ? namedEntityTags(text).has(tag) || (tag === "nr" && holdsUnknownName(text)) : ENGLISH_NAME.test(text));
  const subject = identitySubject(question);
  const formWords = subject ? kept.filter((t) => FORM_WORDS.test(t)) : [];
  // The subject as asked, or its main word (a word of more than half its length: 自在奥义书 may
  // be named without 《》), which the predicating sentence names before its copula. Shorter parts
  // (标准 of 标准杆数) name other things too.
  const subjectWords = subject ? [...new Set([subject.normalize("NFKC").toLowerCase(), ...terms(subject).filter((t) => t.length >= 2 && 2 * t.length > subject.length)])].sort((a, b) => b.length - a.length) : [];
  const predicates = subjectWords.length ? new RegExp(`(?:${subjectWords.map(escapeRegExp).join("|")})${COPULA_AFTER}`, "i") : undefined;
  // "Who is X?" asks what X is when X is a name (猎骄靡是谁); when X is a role (首位副馆长是谁) it
  // asks for the name of whoever holds it.
  const identity = predicates && !(PERSON_QUESTION.test(question) && !isName(subject!));
  const cue: AnswerCue | undefined = identity
    ? { kind: "identity", test: (text) => predicates.test(text.normalize("NFKC")) }
    : TIME_QUESTION.test(question)
    ? { kind: "time", test: (text) => TIME_ANSWER.test(text) }
    : QUANTITY_QUESTION.test(question)
      ? { kind: "quantity", test: (text) => QUANTITY_ANSWER.test(text) }
      : PLACE_QUESTION.test(question)
        ? { kind: "place", test: named("ns") }
        : PERSON_QUESTION.test(question)
          ? { kind: "person", test: named("nr") }
          : REASON_QUESTION.test(question)
            ? { kind: "reason", test: (text) => REASON_ANSWER.test(text) }
            : undefined;
  const normalised = question.normalize("NFKC").toLowerCase();
  // The noun a question word governs (什么科目, 有何作用, 怎样的地位) names the kind of answer; the
  // verb after 如何 or 为何 (如何影响) is what is asked about.
  const answerTypeWords = kept.filter((t) => {
    const word = escapeRegExp(t);
    return (
      formWords.includes(t) ||
      new RegExp(`(?:什么|哪一?[个种类些位家座所]?|(?<![如为])何|有何|多少)(?:样的?|的)?${word}|怎么?样的${word}`).test(normalised) ||
      new RegExp(`的${word}(?:是|为|有|叫)?(?:什么|怎样|如何|怎么样|何|哪|谁)`).test(normalised) ||
      new RegExp(`\\b(?:what|which)\\s+(?:kind of\\s+|type of\\s+)?${word}`).test(normalised)
    );
  });
  return { terms: kept, formWords, answerTypeWords, ...(cue ? { cue } : {}) };
}
