// The pieces an extractive answer can be made of: a chunk's whole sentences, the clauses of its
// long Chinese sentences, and its fenced code blocks kept whole. Pieces the chunk's edge cut in
// half are marked, so an answer never starts mid-sentence ("- , so engines.sh fetch ...").

export interface AnswerUnit {
  /** As shown: Markdown emphasis and bullets removed from prose; code verbatim, fences included. */
  text: string;
  kind: "sentence" | "clause" | "code";
  /** Position in the chunk, counting every unit. */
  order: number;
  /** Which sentence of the chunk it belongs to; a long sentence's clauses share one. */
  sentence: number;
  /** Cut by the chunk's start or end, so not a whole sentence or clause: never shown. */
  fragment: boolean;
}

export interface UnitOptions {
  locale: string;
  /** False when the chunk begins inside its document, so its first sentence may be the overlap's tail. */
  startsDocument: boolean;
  /**
   * Chinese sentences longer than this many characters are split at their clauses (，；): a
   * Chinese sentence can run a whole paragraph, and its clauses often each state one fact. One
   * cut by the chunk's edge is split whatever its length, so its whole clauses can still be quoted.
   */
  longSentenceChars: number;
}

import { withoutInlineMarkup } from "../../../lib/inline-markup.ts";

const HAN = /\p{Script=Han}/u;
const FENCE = /^(```|~~~)[^\n]*\n[\s\S]*?\n\1[^\n]*$/gm;
const OPEN_FENCE = /^(```|~~~)/m;
// Headings, table rows and bare images say where an answer is, not what it is.
const STRUCTURAL_LINE = /^\s*(#{1,6}\s|\||!\[)/;
const HEADING = /^\s*#{1,6}\s/;
const LIST_ITEM = /^\s*([-*+]|\d+\.)\s+/;
// A sentence cut by the chunk's start begins in lower case or with punctuation that continues one.
const CONTINUATION = /^[\p{Ll},，;；:：.。!！?？)\]）】」』、…]/u;
const HAN_START = /^\p{Script=Han}/u;
// A sentence ends with terminal punctuation, possibly followed by a closing quote or bracket.
const TERMINAL = /[.!?。！？;；:：…]["'”’)\]）】」』]*$/u;
const CLAUSE = /[^，；]+[，；]*/g;
const OPENERS_AT_END = /[《「『“‘（【〈]+\s*$/u;
// A full stop after an initial or a title does not end the sentence ("Henry A. Walsh", "A．Ｌ．纳戴",
// "Mr. Smith"); ICU's sentence rules break there, before the capital that follows.
const ABBREVIATION_AT_END = /(?:^|[^\p{L}\p{N}])(?:\p{Lu}|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr)[.．]\s*$/u;

// A title in 《》 is a name, not a sentence, whatever mark ends it (《CDTV×Sacas！》节目中…): ICU
// breaks after its closing bracket.
const TITLE_AT_END = /[.!?。！？]+\s*[》〉]\s*$/u;
// A full stop with a letter or a Chinese character right after it, no space between, joins a name
// or a word (Visual Basic .NET, 圣若望．玛达, node.js), where ICU breaks: a sentence's full stop is
// followed by a space, or is 。 in Chinese.
const GLUED_FULL_STOP = /[.．]$/u;
// Quotation marks and brackets: a sentence's end inside them (“唵！…。”, 云雀(ストップ!!_ひばりくん!))
// ends the quoted words or the aside, not the sentence holding them.
const OPENERS = new Set(["“", "「", "『", "(", "（", "《", "【", "〈"]);
const CLOSERS = new Set(["”", "」", "』", ")", "）", "》", "】", "〉"]);

/** How many quotation marks and brackets the text opens and leaves open. */
function openQuotes(text: string): number {
  let open = 0;
  for (const ch of text) {
    if (OPENERS.has(ch)) open++;
    else if (open > 0 && CLOSERS.has(ch)) open--;
  }
  return open;
}

/** Whether the rest of the line closes the quotations and brackets left open before it. */
function closesLater(rest: string, open: number): boolean {
  let depth = open;
  for (const ch of rest) {
    if (OPENERS.has(ch)) depth++;
    else if (CLOSERS.has(ch) && --depth === 0) return true;
  }
  return false;
}

/** Markdown emphasis, code ticks and list bullets removed, so the sentence reads as prose. */
export function withoutMarkup(text: string): string {
  return withoutInlineMarkup(text).replace(/\s+/g, " ").trim();
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
    // A heading is one line whatever it holds (# 停止！！云雀): its tail is no sentence of the text.
    const segments = (HEADING.test(line) ? [{ index: 0, segment: line }] : [...segmenter.segment(line)]).map((s) => ({ index: s.index, end: s.index + s.segment.length }));
    // ICU leaves an opening bracket or quote that follows a full stop with the sentence before it
    // ("…。《" + "子不语》一书…"): it opens the next sentence, so it moves there.
    for (let i = 0; i + 1 < segments.length; i++) {
      const opener = OPENERS_AT_END.exec(line.slice(segments[i].index, segments[i].end));
      if (opener && opener.index > 0) segments[i + 1].index = segments[i].end = segments[i].index + opener.index;
    }
    for (let i = segments.length - 2; i >= 0; i--) {
      const segment = line.slice(segments[i].index, segments[i].end);
      const glued = GLUED_FULL_STOP.test(segment) && /^\p{L}/u.test(line.slice(segments[i + 1].index));
      if (ABBREVIATION_AT_END.test(segment) || glued || TITLE_AT_END.test(segment)) segments.splice(i, 2, { index: segments[i].index, end: segments[i + 1].end });
    }
    // A quotation is part of the sentence that quotes it (无上我：“唵！自在居住…。”): a segment ending
    // inside a quotation that the line closes later runs on to the closing mark.
    for (let i = 0; i + 1 < segments.length; i++) {
      const open = openQuotes(line.slice(segments[i].index, segments[i].end));
      if (open > 0 && closesLater(line.slice(segments[i].end), open)) {
        segments.splice(i, 2, { index: segments[i].index, end: segments[i + 1].end });
        i--;
      }
    }
    for (const { index, end } of segments) {
      const segment = line.slice(index, end);
      const trimmed = segment.trim();
      if (trimmed) out.push({ text: trimmed, start: lineStart + index + (segment.length - segment.trimStart().length) });
    }
    lineStart += line.length + 1;
  }
  return out;
}

/** The chunk cut into prose and fenced code, in order; a fence the chunk's end cut off is code too. */
function blocks(text: string): { code: boolean; text: string; start: number; closed: boolean }[] {
  const out: { code: boolean; text: string; start: number; closed: boolean }[] = [];
  let at = 0;
  const prose = (end: number) => {
    const part = text.slice(at, end);
    const open = OPEN_FENCE.exec(part);
    if (open) {
      if (open.index > 0) out.push({ code: false, text: part.slice(0, open.index), start: at, closed: true });
      out.push({ code: true, text: part.slice(open.index), start: at + open.index, closed: false });
    } else if (part.trim()) out.push({ code: false, text: part, start: at, closed: true });
  };
  for (const match of text.matchAll(FENCE)) {
    prose(match.index);
    out.push({ code: true, text: match[0], start: match.index, closed: true });
    at = match.index + match[0].length;
  }
  prose(text.length);
  return out;
}

/** A chunk's units in order, with the ones its edges cut marked as fragments. */
export function answerUnits(chunkText: string, options: UnitOptions): AnswerUnit[] {
  const units: AnswerUnit[] = [];
  let sentence = 0;
  const parts = blocks(chunkText);
  parts.forEach((part, partIndex) => {
    const first = partIndex === 0;
    const last = partIndex === parts.length - 1;
    if (part.code) {
      // A code block the chunk cut is no use to copy from: half a command is worse than none.
      units.push({ text: part.text.trim(), kind: "code", order: units.length, sentence: sentence++, fragment: !part.closed });
      return;
    }
    const sentences = splitSentences(part.text, options.locale);
    sentences.forEach((s, i) => {
      if (STRUCTURAL_LINE.test(s.text)) return;
      const text = withoutMarkup(s.text);
      if (!text) return;
      const atChunkStart = first && i === 0 && part.start + s.start === leadingSpace(chunkText);
      const atChunkEnd = last && i === sentences.length - 1;
      // The chunk's first sentence is whole if the chunk opens its document, or visibly starts one;
      // its last one is whole if it ends as a sentence does, or is a list item or line of its own.
      // Chinese shows no such sign, and a chunk's overlap starts at a sentence's end only by chance
      // (2 % of CMRC's chunks): its first Chinese sentence counts as cut unless it opens the document.
      const cutAtStart = atChunkStart && !options.startsDocument && (CONTINUATION.test(text) || HAN_START.test(text));
      const cutAtEnd = atChunkEnd && !TERMINAL.test(text) && !LIST_ITEM.test(s.text);
      const index = sentence++;
      // A Chinese sentence the chunk's edge cut still has whole clauses before (or after) the cut:
      // Chinese runs many facts into one sentence, and a fact in its first clause is not lost.
      if (HAN.test(text) && ([...text].length > options.longSentenceChars || cutAtStart || cutAtEnd)) {
        const clauses = text.match(CLAUSE) ?? [text];
        clauses.forEach((clause, c) => {
          const fragment = (c === 0 && cutAtStart) || (c === clauses.length - 1 && cutAtEnd && !/[，；]$/.test(clause));
          units.push({ text: clause.trim(), kind: "clause", order: units.length, sentence: index, fragment });
        });
      } else {
        units.push({ text, kind: "sentence", order: units.length, sentence: index, fragment: cutAtStart || cutAtEnd });
      }
    });
  });
  return units;
}

function leadingSpace(text: string): number {
  return text.length - text.trimStart().length;
}
