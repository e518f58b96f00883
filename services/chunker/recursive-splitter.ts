import { InvalidInputError } from "../../lib/errors.ts";
import type { TokenCounter } from "../../lib/tokens/tokenizer.ts";

/**
 * The default separator ladder, coarsest first; each rung holds the separators of one level.
 * Sentence and clause ends cover English and Chinese; Chinese text has no spaces, so it relies on
 * these rungs (and the character fallback) to be split at all.
 */
export const DEFAULT_SEPARATOR_LADDER: readonly (readonly string[])[] = [
  ["\n\n"],
  ["\n"],
  [". ", "! ", "? ", "。", "！", "？", "；"],
  ["，", "、", ", ", "; "],
  [" "],
];

export interface RecursiveSplitterOptions {
  /** Most tokens (as the counter counts them) in one chunk. */
  chunkSize: number;
  /** Most tokens repeated from the end of one chunk at the start of the next. */
  chunkOverlap: number;
  /** Each string is one rung, tried in order; empty means DEFAULT_SEPARATOR_LADDER. */
  separators?: readonly string[];
  /** The embedding model's usable limit; a chunkSize above it is refused. */
  maxChunkTokens?: number;
}

/**
 * One output chunk. Invariant: text === source.slice(start, end), and text neither starts nor ends
 * with whitespace (the span is trimmed, so offsets point at exactly what is stored and cited).
 */
export interface SplitChunk {
  start: number;
  end: number;
  text: string;
  tokenCount: number;
}

/** A contiguous span of the source with its counted tokens; `level` is the rung that cut it out. */
interface Piece {
  start: number;
  end: number;
  tokens: number;
  level: number;
}

const WHITESPACE = /\s/;

/** Offsets where the graphemes of a span begin, then its end: at(0) … at(length - 1). */
interface Bounds {
  length: number;
  at(i: number): number;
}

const NON_ASCII = /[^\x00-\x7f]/;

/** See #measure: the most characters one counted token may stand for. */
export const MAX_CHARS_PER_TOKEN = 10;

/**
 * Recursive splitting in the manner of LangChain's RecursiveCharacterTextSplitter, measured in
 * model tokens and tracking character offsets. Hand-written because that splitter (and its JS
 * port) reports no character offsets, which citations need, and assumes lengths add up across
 * cuts, which word-piece counts do not when a cut falls inside a word.
 *
 * How it works: the text is cut into pieces at the coarsest rung that splits it; a piece still
 * over chunkSize is cut at the next rung, down to single characters. Separators stay at the end of
 * the piece they close, so a sentence keeps its full stop. Pieces are merged greedily into chunks;
 * a piece that does not fit into a chunk less than half full is cut finer first, so a lone heading
 * or the overlap alone does not become a chunk of its own. The trailing pieces of a chunk (finer
 * ones if a whole piece is too big) that fit in chunkOverlap start the next chunk.
 *
 * Cost: each piece is counted once and each chunk once more for its exact count; with the default
 * settings that is about three times the text's length through the tokenizer, never per prefix.
 */
export class RecursiveSplitter {
  readonly #counter: TokenCounter;
  readonly #chunkSize: number;
  readonly #chunkOverlap: number;
  readonly #rungs: RegExp[];
  readonly #graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

  constructor(counter: TokenCounter, options: RecursiveSplitterOptions) {
    const { chunkSize, chunkOverlap, maxChunkTokens } = options;
    if (!Number.isInteger(chunkSize) || chunkSize < 1) {
      throw new InvalidInputError(`chunk size must be a whole number of tokens of at least 1, got ${chunkSize}`);
    }
    if (maxChunkTokens !== undefined && chunkSize > maxChunkTokens) {
      throw new InvalidInputError(
        `chunk size ${chunkSize} is above the embedding model's limit of ${maxChunkTokens} tokens per chunk`,
      );
    }
    if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0) {
      throw new InvalidInputError(`chunk overlap must be a whole number of tokens, 0 or more, got ${chunkOverlap}`);
    }
    if (chunkOverlap >= chunkSize) {
      throw new InvalidInputError(`chunk overlap ${chunkOverlap} must be smaller than the chunk size ${chunkSize}`);
    }
    this.#counter = counter;
    this.#chunkSize = chunkSize;
    this.#chunkOverlap = chunkOverlap;
    // An empty string means "characters" in LangChain ladders; that rung is always last here anyway.
    const custom = (options.separators ?? []).filter((s) => s.length > 0);
    const ladder = custom.length > 0 ? custom.map((s) => [s]) : DEFAULT_SEPARATOR_LADDER;
    this.#rungs = ladder.map((rung) => rungPattern(rung));
  }

  /** Splits source[from, to) into chunks whose offsets point into source. */
  split(source: string, from = 0, to = source.length): SplitChunk[] {
    if (from < 0 || to > source.length || from > to) {
      throw new RangeError(`span [${from}, ${to}) is outside a text of length ${source.length}`);
    }
    const pieces: Piece[] = [];
    this.#cut(source, from, to, 0, this.#chunkSize, pieces);
    return this.#merge(source, pieces);
  }

  /**
   * Appends pieces of source[start, end), each within limit tokens, trying rungs from `rung` on.
   * `tokens` is the span's count when the caller already knows it.
   */
  #cut(source: string, start: number, end: number, rung: number, limit: number, out: Piece[], tokens?: number): void {
    for (let level = rung; level < this.#rungs.length; level++) {
      const spans = cutAfter(source, start, end, this.#rungs[level]);
      if (spans.length < 2) continue;
      for (const [s, e] of spans) {
        const count = this.#measure(source.slice(s, e));
        if (count <= limit) out.push({ start: s, end: e, tokens: count, level });
        else this.#cut(source, s, e, level + 1, limit, out, count);
      }
      return;
    }
    // No rung cuts it: keep it whole when it fits, else fall to single characters.
    const count = tokens ?? this.#measure(source.slice(start, end));
    if (count <= limit) out.push({ start, end, tokens: count, level: this.#rungs.length });
    else this.#cutCharacters(source, start, end, limit, out);
  }

  /**
   * The last resort for runs with no separator (Chinese without punctuation, long identifiers, a
   * 10 MB "word"): windows of whole graphemes worth about an eighth of the limit each, so merging
   * still packs chunks well, halved until they fit. The width comes from the run's density (one
   * token a character for Chinese, a tenth for a run the tokenizer reads as [UNK]); counting
   * grapheme by grapheme would cost one tokenizer call per character, and a call costs about as
   * much as 250 characters of counting. ASCII needs no grapheme segmentation (every character is
   * one, a CRLF pair aside, and cutting one is harmless), which saves most of the time on long runs.
   */
  #cutCharacters(source: string, start: number, end: number, limit: number, out: Piece[]): void {
    const sample = source.slice(start, Math.min(end, start + 4096));
    const tokensPerChar = Math.max(this.#measure(sample), 1) / sample.length;
    const width = Math.max(1, Math.floor(limit / 8 / tokensPerChar));
    const bounds: Bounds = NON_ASCII.test(source.slice(start, end))
      ? this.#graphemeBounds(source, start, end)
      : { length: end - start + 1, at: (i) => start + i };
    for (let i = 0; i < bounds.length - 1; i += width) {
      this.#cutWindow(source, bounds, i, Math.min(i + width, bounds.length - 1), limit, out);
    }
  }

  /**
   * Offsets where graphemes of source[start, end) begin, plus end. Intl.Segmenter slows down
   * sharply on long strings (80,000 characters took 38 s here), so it reads bounded slices and
   * resumes at the last cluster of each, which the slice edge may have cut.
   */
  #graphemeBounds(source: string, start: number, end: number): Bounds {
    const SLICE = 2048;
    const bounds: number[] = [];
    let at = start;
    while (at < end) {
      const sliceEnd = Math.min(end, at + SLICE);
      const starts: number[] = [];
      for (const { index } of this.#graphemes.segment(source.slice(at, sliceEnd))) starts.push(at + index);
      // Keep the last cluster for the next slice unless the slice reached the end, or it is the only one.
      const keep = sliceEnd === end || starts.length === 1 ? starts.length : starts.length - 1;
      for (let i = 0; i < keep; i++) bounds.push(starts[i]);
      at = keep === starts.length ? sliceEnd : starts[keep];
    }
    bounds.push(end);
    return { length: bounds.length, at: (i) => bounds[i] };
  }

  /** Appends graphemes [from, to) of `bounds` as pieces within limit, halving as needed. */
  #cutWindow(source: string, bounds: Bounds, from: number, to: number, limit: number, out: Piece[]): void {
    const level = this.#rungs.length;
    const tokens = this.#measure(source.slice(bounds.at(from), bounds.at(to)));
    if (tokens > limit && to - from > 1) {
      const mid = (from + to) >> 1;
      this.#cutWindow(source, bounds, from, mid, limit, out);
      this.#cutWindow(source, bounds, mid, to, limit, out);
    } else {
      // A lone grapheme over the limit is kept: overlap simply stops before it, and merging
      // refuses it with a clear error (only possible with absurdly small chunk sizes).
      out.push({ start: bounds.at(from), end: bounds.at(to), tokens, level });
    }
  }

  #merge(source: string, pieces: Piece[]): SplitChunk[] {
    // A stack, next piece on top, so pieces cut finer or handed back go to the front cheaply.
    const queue = [...pieces].reverse();
    const chunks: SplitChunk[] = [];
    let carry: Piece[] = [];
    let lastEnd = -1;
    while (queue.length > 0) {
      const current = [...carry];
      let carriedPieces = current.length;
      let estimate = sumTokens(current);
      while (queue.length > 0) {
        const piece = queue[queue.length - 1];
        if (estimate + piece.tokens <= this.#chunkSize) {
          current.push(queue.pop()!);
          estimate += piece.tokens;
        } else if (estimate < this.#chunkSize / 2 && piece.level < this.#rungs.length) {
          // Rather than close a chunk that is mostly empty (a lone heading, or just the overlap),
          // cut the piece that does not fit at the next rung and take what fits of it.
          queue.pop();
          const finer: Piece[] = [];
          this.#cut(source, piece.start, piece.end, piece.level + 1, this.#chunkSize, finer, piece.tokens);
          for (let k = finer.length - 1; k >= 0; k--) queue.push(finer[k]);
        } else if (current.length === carriedPieces && carriedPieces > 0) {
          // Not even one new piece fits after the overlap: the overlap gives way.
          estimate -= current.shift()!.tokens;
          carriedPieces--;
        } else {
          break;
        }
      }

      // The estimate is exact only where cuts fall between words; the real count decides.
      let tokens = this.#countSpan(source, current);
      while (tokens > this.#chunkSize) {
        if (current.length - carriedPieces > 1) {
          queue.push(current.pop()!);
        } else if (carriedPieces > 0) {
          current.shift();
          carriedPieces--;
        } else {
          const text = source.slice(current[0].start, current[0].end);
          throw new InvalidInputError(`"${text}" alone needs ${tokens} tokens, more than the chunk size of ${this.#chunkSize}`);
        }
        tokens = this.#countSpan(source, current);
      }

      const [start, end] = trim(source, current[0].start, current[current.length - 1].end);
      // Skip chunks with no new text (only overlap and whitespace left over).
      if (start < end && end > lastEnd) {
        chunks.push({ start, end, text: source.slice(start, end), tokenCount: tokens });
        lastEnd = end;
      }
      carry = queue.length > 0 ? this.#overlapTail(source, current) : [];
    }
    return chunks;
  }

  /** The trailing pieces of a chunk that fit in chunkOverlap, cutting the last one finer if needed. */
  #overlapTail(source: string, current: Piece[]): Piece[] {
    if (this.#chunkOverlap === 0) return [];
    const tail: Piece[] = [];
    let budget = this.#chunkOverlap;
    for (let i = current.length - 1; i >= 0 && budget > 0; i--) {
      const piece = current[i];
      if (piece.tokens <= budget) {
        tail.unshift(piece);
        budget -= piece.tokens;
        continue;
      }
      tail.unshift(...this.#tailOf(source, piece.start, piece.end, piece.level + 1, budget));
      break;
    }
    while (tail.length > 0 && this.#countSpan(source, tail) > this.#chunkOverlap) tail.shift();
    return tail;
  }

  /**
   * The end of source[start, end) within budget tokens, cut at rungs from `rung` on. Counts from
   * the back and stops at the first span that does not fit, so only about the overlap is counted.
   */
  #tailOf(source: string, start: number, end: number, rung: number, budget: number): Piece[] {
    const tail: Piece[] = [];
    for (let level = rung; level < this.#rungs.length; level++) {
      const spans = cutAfter(source, start, end, this.#rungs[level]);
      if (spans.length < 2) continue;
      for (let j = spans.length - 1; j >= 0 && budget > 0; j--) {
        const [s, e] = spans[j];
        const tokens = this.#measure(source.slice(s, e));
        if (tokens <= budget) {
          tail.unshift({ start: s, end: e, tokens, level });
          budget -= tokens;
          continue;
        }
        tail.unshift(...this.#tailOf(source, s, e, level + 1, budget));
        break;
      }
      return tail;
    }
    const windows: Piece[] = [];
    this.#cutCharacters(source, start, end, budget, windows);
    for (let j = windows.length - 1; j >= 0 && windows[j].tokens <= budget; j--) {
      tail.unshift(windows[j]);
      budget -= windows[j].tokens;
    }
    return tail;
  }

  /**
   * The tokens of text as the splitter counts them: the model's word pieces, but never fewer than
   * one per MAX_CHARS_PER_TOKEN characters. A WordPiece tokenizer turns any word longer than 100
   * characters into one [UNK], so a 10 MB run without spaces counts as a single token and, split
   * by tokens alone, would become one 10-million-character chunk; the floor hard-splits such runs
   * into chunks no longer than chunkSize × MAX_CHARS_PER_TOKEN characters. Real text stays well
   * under the floor (about 4 characters per token in English, 1 in Chinese).
   */
  #measure(text: string): number {
    return Math.max(this.#counter.count(text), Math.ceil(text.length / MAX_CHARS_PER_TOKEN));
  }

  /** Tokens of the trimmed text the pieces span: exactly what a chunk made of them would count. */
  #countSpan(source: string, pieces: Piece[]): number {
    const [start, end] = trim(source, pieces[0].start, pieces[pieces.length - 1].end);
    return this.#measure(source.slice(start, end));
  }
}

function rungPattern(separators: readonly string[]): RegExp {
  // Longest first, so a rung holding both "\n\n" and "\n" would prefer the paragraph break.
  const sorted = [...separators].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
}

/** Cuts source[start, end) right after every separator match; the spans cover it exactly. */
function cutAfter(source: string, start: number, end: number, pattern: RegExp): [number, number][] {
  const text = source.slice(start, end);
  const spans: [number, number][] = [];
  let last = 0;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const cut = match.index + match[0].length;
    if (cut < text.length) {
      spans.push([start + last, start + cut]);
      last = cut;
    }
  }
  spans.push([start + last, end]);
  return spans;
}

function trim(source: string, start: number, end: number): [number, number] {
  while (start < end && WHITESPACE.test(source[start])) start++;
  while (end > start && WHITESPACE.test(source[end - 1])) end--;
  return [start, end];
}

function sumTokens(pieces: Piece[]): number {
  return pieces.reduce((sum, piece) => sum + piece.tokens, 0);
}
