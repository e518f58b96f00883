// Where an answer to an answerable question went wrong, read from the turn's own record: the step
// that first lost the gold answer. Retrieval lost it (no candidate holds it), the context lost it
// (a candidate holds it but no context entry does), the gate lost it (the answer abstained), the
// answerer's sentence choice lost it (the context holds it, the answer quotes elsewhere), the
// answerer's cut lost it (the quoted sentence or clause holds part of it), or the citation lost it
// (the answer holds it, no cited passage does). Pure functions over strings; unit-tested.
import { containsGold, normalizeForMatch, withoutMarkers, withoutNotices, type AnsweredQuery } from "./answer-metrics.ts";

export const FAILURE_KINDS = ["not_retrieved", "not_in_context", "abstained", "not_chosen", "cut", "wrong_citation"] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** What the turn saw and said, as texts. */
export interface AnswerTrace {
  /** Every candidate chunk retrieval returned (each base's lists and the fused ranking). */
  retrievedTexts: readonly string[];
  /** The numbered context the answerer read. */
  contextTexts: readonly string[];
  /** The answer's body: markers kept (they separate the quoted pieces), notices removed. */
  answerText: string;
  answered: boolean;
  /** The texts of the passages the answer cites. */
  citedTexts: readonly string[];
}

/** The first step that lost the gold answer; undefined when the answer holds it and cites a passage that does. */
export function failureKind(trace: AnswerTrace, golds: readonly string[]): FailureKind | undefined {
  const inContext = trace.contextTexts.filter((text) => containsGold(text, golds));
  if (inContext.length === 0) {
    return [...trace.retrievedTexts, ...trace.contextTexts].some((text) => containsGold(text, golds)) ? "not_in_context" : "not_retrieved";
  }
  if (!trace.answered) return "abstained";
  if (!containsGold(withoutMarkers(trace.answerText), golds)) return quotesPartOfGold(trace.answerText, inContext, golds) ? "cut" : "not_chosen";
  return trace.citedTexts.some((text) => containsGold(text, golds)) ? undefined : "wrong_citation";
}

/** The failure of one answered query from its trace; undefined without one (a refused question). */
export function failureOfAnswer(answered: AnsweredQuery, golds: readonly string[], notices: readonly string[]): FailureKind | undefined {
  if (!answered.trace) return undefined;
  return failureKind(
    {
      retrievedTexts: answered.trace.retrievedTexts,
      contextTexts: answered.trace.context.map((c) => c.text),
      answerText: withoutNotices(answered.text, notices),
      answered: answered.answered,
      citedTexts: answered.citedChunkTexts,
    },
    golds,
  );
}

/** Counts of each kind, every kind present (0 when none). */
export function countFailures(kinds: readonly (FailureKind | undefined)[]): Record<FailureKind, number> {
  const counts = Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0])) as Record<FailureKind, number>;
  for (const kind of kinds) if (kind) counts[kind]++;
  return counts;
}

/**
 * Whether a piece the answer quotes overlaps a gold span where a context passage holds it: the
 * answer chose the right place and cut the answer short (a clause of a long sentence, a sentence
 * the span runs past). Pieces are the texts between markers, compared without whitespace or
 * punctuation (the answerer ends a clause with "。" and drops a leading comma).
 */
function quotesPartOfGold(answerText: string, passages: readonly string[], golds: readonly string[]): boolean {
  const pieces = answerText.split(/[[【［][\s\d０-９,，、;；]+[\]】］]/).map(bare).filter((p) => p.length >= 2);
  for (const passage of passages.map(bare)) {
    for (const gold of golds.map(bare).filter(Boolean)) {
      for (let at = passage.indexOf(gold); at >= 0; at = passage.indexOf(gold, at + 1)) {
        const goldEnd = at + gold.length;
        for (const piece of pieces) {
          for (let p = passage.indexOf(piece); p >= 0; p = passage.indexOf(piece, p + 1)) if (p < goldEnd && at < p + piece.length) return true;
        }
      }
    }
  }
  return false;
}

function bare(text: string): string {
  return normalizeForMatch(text).replace(/[\s\p{P}]+/gu, "");
}
