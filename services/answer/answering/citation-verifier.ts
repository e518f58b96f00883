// After an answer is complete, checks each citation: does the chunk a marker cites support the
// sentence the marker stands after? A model can cite a real passage for a claim the passage never
// makes; the marker then looks like evidence and is not.
import { splitSentences } from "./answer-units.ts";
import { HAN, holds, termBag, terms } from "./content-terms.ts";
import { MIN_KNOWN_TOKEN_SHARE, type QueryEmbedding } from "../retrieval/retrieval-stage.ts";

/** A sentence is lexically supported when at least this share of its content words is in the chunk. */
export const LEXICAL_SUPPORT_THRESHOLD = 0.5;
/**
 * Otherwise it is supported when its embedding is at least this similar (cosine) to one of the
 * chunk's sentences — a paraphrase. all-MiniLM-L6-v2 puts paraphrases around 0.7–0.9 and sentences
 * on the same topic that say different things around 0.3–0.5.
 */
export const EMBEDDING_SUPPORT_THRESHOLD = 0.6;

export interface CitationCheck {
  /** The n of the [n] marker as it stands in the answer. */
  marker: number;
  /** [start, end) offsets of the cited sentence in the answer text. */
  sentenceStart: number;
  sentenceEnd: number;
  /** Share of the sentence's content words found in the chunk (1 when the sentence is quoted verbatim). */
  lexicalSupport: number;
  /** Best cosine similarity to one of the chunk's sentences; absent when not computed. */
  embeddingSupport?: number;
  supported: boolean;
}

/** Embeds texts for the check; absent when no embedder is at hand. */
export type SupportEmbedder = (texts: string[]) => Promise<QueryEmbedding[]>;

const MARKER_GROUP = /(?:\[\d+\][ \t]*)+/g;

/** The sentence each marker group stands after: the last sentence of the text since the previous group. */
function citedSentences(answer: string): { markers: number[]; start: number; end: number }[] {
  const out: { markers: number[]; start: number; end: number }[] = [];
  let since = 0;
  for (const group of answer.matchAll(MARKER_GROUP)) {
    const markers = [...group[0].matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    const segment = answer.slice(since, group.index);
    const sentences = splitSentences(segment, HAN.test(segment) ? "zh" : "en").filter((s) => /[\p{L}\p{N}]/u.test(s.text));
    const last = sentences.at(-1);
    if (last) {
      // Punctuation that closed the previous sentence ("[1]. Next…") is not part of this one.
      const lead = /^[\s\p{P}]*/u.exec(last.text)![0].length;
      out.push({ markers, start: since + last.start + lead, end: since + last.start + last.text.length });
    } else if (out.length > 0) {
      // "… [1] [2]" split by text without words: the same sentence cites both.
      out.push({ markers, start: out.at(-1)!.start, end: out.at(-1)!.end });
    }
    since = group.index + group[0].length;
  }
  return out;
}

function compact(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/[\s\p{P}\p{S}]+/gu, "");
}

/** Share of the sentence's content words in the chunk; 1 for a verbatim quote, 0 for a sentence without content words. */
export function lexicalSupport(sentence: string, chunk: string): number {
  const quoted = compact(sentence);
  if (quoted && compact(chunk).includes(quoted)) return 1;
  const words = [...new Set(terms(sentence))];
  if (words.length === 0) return 0;
  const bag = termBag(chunk);
  return words.filter((w) => holds(bag, w)).length / words.length;
}

/** Numbers are where a wrong claim most often hides ("expires after 90 minutes"): each must be in the chunk. */
function numbersFound(sentence: string, chunk: string): boolean {
  const inChunk = new Set(chunk.normalize("NFKC").match(/\d+(?:[.,]\d+)*/g) ?? []);
  return (sentence.normalize("NFKC").match(/\d+(?:[.,]\d+)*/g) ?? []).every((n) => inChunk.has(n));
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * One check per marker occurrence, in answer order. A sentence is supported by its chunk when every
 * number in it is in the chunk and either its words are (lexical support ≥ 0.5) or, failing that,
 * its meaning is (embedding support ≥ 0.6, computed only when an embedder is given and reads at
 * least half of the sentence, as for hybrid retrieval).
 */
export async function verifyCitations(
  answer: string,
  chunkText: (marker: number) => string | undefined,
  embed?: SupportEmbedder,
  /** Told when the embedder fails: the answer has streamed by then, so the checks stay lexical. */
  onEmbedFailure?: (error: unknown) => void,
): Promise<CitationCheck[]> {
  const checks: (CitationCheck & { numbersOk: boolean; sentence: string; chunk: string })[] = [];
  for (const cited of citedSentences(answer)) {
    const sentence = answer.slice(cited.start, cited.end);
    for (const marker of cited.markers) {
      const chunk = chunkText(marker);
      if (chunk === undefined) continue;
      const lexical = lexicalSupport(sentence, chunk);
      const numbersOk = numbersFound(sentence, chunk);
      checks.push({
        marker,
        sentenceStart: cited.start,
        sentenceEnd: cited.end,
        lexicalSupport: lexical,
        supported: numbersOk && lexical >= LEXICAL_SUPPORT_THRESHOLD,
        numbersOk,
        sentence,
        chunk,
      });
    }
  }
  const open = checks.filter((c) => !c.supported && c.numbersOk);
  if (embed && open.length > 0) {
    const sentences = [...new Set(open.map((c) => c.sentence))];
    const chunkSentences = new Map([...new Set(open.map((c) => c.chunk))].map((chunk) => [chunk, splitSentences(chunk, HAN.test(chunk) ? "zh" : "en").map((s) => s.text)]));
    const texts = [...new Set([...sentences, ...[...chunkSentences.values()].flat()])];
    let vectors: QueryEmbedding[] | undefined;
    try {
      vectors = await embed(texts);
    } catch (error) {
      onEmbedFailure?.(error);
    }
    const vectorOf = new Map(texts.map((t, i) => [t, vectors?.[i]]));
    for (const check of open) {
      if (!vectors) break;
      const claim = vectorOf.get(check.sentence)!;
      if (claim.knownTokenShare < MIN_KNOWN_TOKEN_SHARE) continue;
      const best = Math.max(0, ...chunkSentences.get(check.chunk)!.map((s) => cosine(claim.vector, vectorOf.get(s)!.vector)));
      check.embeddingSupport = best;
      check.supported = best >= EMBEDDING_SUPPORT_THRESHOLD;
    }
  }
  return checks.map(({ numbersOk: _n, sentence: _s, chunk: _c, ...check }) => check);
}
