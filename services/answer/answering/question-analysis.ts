// What a question asks for, in the terms a sentence is scored by: its content words (each counted
// once) and, when its question word asks for a time, a quantity, a place or a person, a cue that
// the answering sentence holds one.
import { HAN, namedEntityTags, terms } from "./content-terms.ts";

/** A kind of answer a question word asks for, and how a sentence that gives one looks. */
export interface AnswerCue {
  kind: "time" | "quantity" | "place" | "person";
  /** Whether a sentence states an answer of that kind. */
  test(text: string): boolean;
}

const TIME_QUESTION = /哪一?年|何年|哪个?年代|什么时[候间]|何时|哪一?天|几月|几号|\bwhen\b|\bwhat (year|date|time)\b|\bhow long ago\b/i;
const TIME_ANSWER = /\d+\s*(年|月|日|世纪)|[一二三四五六七八九十〇零百千]+(年|月|日|世纪)|\b(1[0-9]{3}|20[0-9]{2})\b|\b(january|february|march|april|may|june|july|august|september|october|november|december)\b/i;
const QUANTITY_QUESTION = /多少|几[个条层种位次名座只头本家所张部项届辆架艘度岁年天人]|多[长大高远重深宽久]|\bhow (many|much|long|far|big|tall|old|high)\b/i;
const QUANTITY_ANSWER = /\d|[一二两三四五六七八九十百千万亿]+[个条层种位次名座只头本家所张部项届辆架艘度岁年天人米里吨]|\b(one|two|three|four|five|six|seven|eight|nine|ten|hundred|thousand|million|billion)\b/i;
const PLACE_QUESTION = /哪里|哪儿|何处|何地|在哪|什么地方|哪个(国家|城市|省|地区|地方)|\bwhere\b/i;
const PERSON_QUESTION = /谁|哪位|何人|\bwho(m|se)?\b/i;
// English names and places: a capitalised word not opening the sentence.
const ENGLISH_NAME = /\s[A-Z][a-z]+/;
// The words that ask: they name no topic, and a sentence holding them ("哪一年" in a passage) does
// not answer for it.
const QUESTION_WORDS = /^(哪|几|多少|什么|谁|何)|^(一年|几个|几条|几种|几层|几位|几次|哪个|哪些|哪里|哪儿|哪家|哪一)$/;

export interface QuestionAnalysis {
  /** Content words, minus question words and minus words inside a longer one (路德 in 路德维希). */
  terms: string[];
  cue?: AnswerCue;
}

export function analyseQuestion(question: string): QuestionAnalysis {
  const words = [...new Set(terms(question))].filter((t) => !(HAN.test(t) && QUESTION_WORDS.test(t)));
  // jieba's search mode also yields the parts of a compound; counting both would weigh a name
  // like 路德维希·普朗特 four times over the word the question is really about.
  const kept = words.filter((t) => !words.some((other) => other !== t && other.length > t.length && other.includes(t)));
  // A place or a person is recognised by jieba's part-of-speech tags (ns, nr) in Chinese.
  const named = (tag: "ns" | "nr") => (text: string) => (HAN.test(text) ? namedEntityTags(text).has(tag) : ENGLISH_NAME.test(text));
  const cue: AnswerCue | undefined = TIME_QUESTION.test(question)
    ? { kind: "time", test: (text) => TIME_ANSWER.test(text) }
    : QUANTITY_QUESTION.test(question)
      ? { kind: "quantity", test: (text) => QUANTITY_ANSWER.test(text) }
      : PLACE_QUESTION.test(question)
        ? { kind: "place", test: named("ns") }
        : PERSON_QUESTION.test(question)
          ? { kind: "person", test: named("nr") }
          : undefined;
  return { terms: kept, ...(cue ? { cue } : {}) };
}
