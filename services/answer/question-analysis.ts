// What a question asks for, in the terms a sentence is scored by: its content words (each counted
// once) and, when its question word asks for a time or a quantity, a cue that the answering
// sentence holds one.
import { HAN, terms } from "./content-terms.ts";

/** A kind of answer a question word asks for, and how a sentence that gives one looks. */
export interface AnswerCue {
  kind: "time" | "quantity";
  /** Matches a sentence that states an answer of that kind. */
  pattern: RegExp;
}

const TIME_QUESTION = /哪一?年|何年|哪个?年代|什么时[候间]|何时|哪一?天|几月|几号|\bwhen\b|\bwhat (year|date|time)\b|\bhow long ago\b/i;
const TIME_ANSWER = /\d+\s*(年|月|日|世纪)|[一二三四五六七八九十〇零百千]+(年|月|日|世纪)|\b(1[0-9]{3}|20[0-9]{2})\b|\b(january|february|march|april|may|june|july|august|september|october|november|december)\b/i;
const QUANTITY_QUESTION = /多少|几[个条层种位次名座只头本家所张部项届辆架艘度岁年天人]|多[长大高远重深宽久]|\bhow (many|much|long|far|big|tall|old|high)\b/i;
const QUANTITY_ANSWER = /\d|[一二两三四五六七八九十百千万亿]+[个条层种位次名座只头本家所张部项届辆架艘度岁年天人米里吨]|\b(one|two|three|four|five|six|seven|eight|nine|ten|hundred|thousand|million|billion)\b/i;
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
  const cue: AnswerCue | undefined = TIME_QUESTION.test(question)
    ? { kind: "time", pattern: TIME_ANSWER }
    : QUANTITY_QUESTION.test(question)
      ? { kind: "quantity", pattern: QUANTITY_ANSWER }
      : undefined;
  return { terms: kept, ...(cue ? { cue } : {}) };
}
