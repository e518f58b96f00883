// After an answer is complete, checks each citation: does the chunk a marker cites support the
// claim the marker belongs to — the clause it closes, or the rest of the sentence it opens? A model can cite a real passage for a claim the passage never
// makes; the marker then looks like evidence and is not.
import { splitSentences } from "./answer-units.ts";
import { HAN, holds, stem, termBag, terms } from "./content-terms.ts";
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

// Words that introduce a source rather than state a claim ("According to [1], …", "根据[1]，…",
// "As shown in [2], …"): text made only of these (and stop words) before a marker is no claim.
const LEAD_IN = new Set(
  (
    "according based per see cf source sources reference references passage passages document documents context " +
    "state states stated say says said show shows shown note notes noted report reports reported describe describes described mention mentions mentioned " +
    "根据 据 依据 按照 参见 参考 见 来源 正如 如 所述 所示 资料 文档 文件 段落 上下文 显示 指出 表明 提到 记载 称"
  ).split(" "),
);

interface Claim {
  markers: number[];
  start: number;
  end: number;
}

interface Span {
  start: number;
  end: number;
}

/** Whether a stretch of text states something: a content word that is not a source's lead-in. */
function statesSomething(text: string): boolean {
  return terms(text).some((t) => !LEAD_IN.has(t) && !LEAD_IN.has(stem(t)));
}

/** The span trimmed of whitespace, and at its start of punctuation too ("[1]. Next…", "[1]，于乐…"). */
function trimmed(answer: string, span: Span): Span {
  const text = answer.slice(span.start, span.end);
  const lead = /^[\s\p{P}]*/u.exec(text)![0].length;
  const trail = /\s*$/u.exec(text.slice(lead))![0].length;
  return { start: span.start + lead, end: span.end - trail };
}

/**
 * What each marker group claims. A marker belongs to a sentence: the one it stands in, else the one
 * whose end it follows on the same line ("…页面。[1]发票…", "… seconds. [1] Next"), else the one it
 * opens on the next line. In its sentence it claims the text since the previous marker (the clause
 * it closes); when that text states nothing — the marker opens the sentence ("According to [2], …",
 * "根据[1]，…") — it claims the rest of the sentence; and a marker with neither ("… [1], [2].")
 * claims what the marker before it in the sentence claims.
 */
function citedClaims(answer: string): Claim[] {
  const groups = [...answer.matchAll(MARKER_GROUP)].map((g) => ({
    start: g.index,
    end: g.index + g[0].length,
    markers: [...g[0].matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])),
  }));
  if (groups.length === 0) return [];
  // Markers read as spaces, so they neither join nor split sentences and every offset holds.
  let masked = answer;
  for (const g of groups) masked = masked.slice(0, g.start) + " ".repeat(g.end - g.start) + masked.slice(g.end);
  const sentences = splitSentences(masked, HAN.test(masked) ? "zh" : "en")
    .filter((s) => /[\p{L}\p{N}]/u.test(s.text))
    .map((s) => ({ start: s.start, end: s.start + s.text.length }));
  if (sentences.length === 0) return [];
  const sentenceOf = (g: Span): number => {
    const next = sentences.findIndex((s) => s.end > g.start);
    if (next < 0) return sentences.length - 1;
    if (sentences[next].start <= g.start || next === 0) return next;
    // Between two sentences: the one before, unless a line break parts the marker from it and none
    // from the sentence after ("…\n[1] The link…").
    const brokenBefore = answer.slice(sentences[next - 1].end, g.start).includes("\n");
    const brokenAfter = answer.slice(g.end, sentences[next].start).includes("\n");
    return brokenBefore && !brokenAfter ? next : next - 1;
  };
  const out: Claim[] = [];
  let previous: { sentence: number; end: number; claim?: Span } | undefined;
  for (const g of groups) {
    const index = sentenceOf(g);
    const sentence = sentences[index];
    const sameSentence = previous?.sentence === index;
    const before: Span = { start: Math.min(sameSentence ? previous!.end : sentence.start, g.start), end: Math.min(g.start, sentence.end) };
    const after: Span = { start: Math.max(g.end, sentence.start), end: sentence.end };
    const beforeText = answer.slice(before.start, Math.max(before.start, before.end));
    let claim: Span | undefined;
    if (statesSomething(beforeText)) claim = trimmed(answer, before);
    else if (after.end > after.start && statesSomething(answer.slice(after.start, after.end).replace(MARKER_GROUP, " "))) claim = trimmed(answer, after);
    else if (sameSentence && previous!.claim) claim = previous!.claim;
    else if (/[\p{L}\p{N}]/u.test(beforeText)) claim = trimmed(answer, before);
    if (claim) out.push({ markers: g.markers, ...claim });
    previous = { sentence: index, end: g.end, claim };
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

/** Cosine similarity; 0 for a zero vector. */
export function cosine(a: Float32Array, b: Float32Array): number {
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
  for (const cited of citedClaims(answer)) {
    // A claim that opens on a marker runs to its sentence's end, past any later marker in it.
    const sentence = answer.slice(cited.start, cited.end).replace(MARKER_GROUP, " ").trim();
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
