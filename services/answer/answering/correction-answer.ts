// Answering from a managed correction. A correction that reached the context first is an
// operator's statement of what the answer is, so it is treated as authoritative: the extractive
// answerer quotes its answer whole instead of picking sentences, and the chat model is told to
// answer from it and to prefer it over passages that disagree.
import { parseCorrectionText } from "../../../lib/correction-document.ts";
import type { ContextChunk } from "./context-builder.ts";
import { HAN } from "./content-terms.ts";
import { EXTRACTIVE_NOTICES, type ExtractiveAnswer } from "./extractive-answerer.ts";

/** Appended to the chat model's rules when the context holds a correction. */
export const CORRECTION_RULE =
  "- Passages marked (correction) are an operator's verified corrections of earlier answers. When one answers the question, answer from it first and cite it, even where other passages say otherwise.";

/** The extract for a context whose first chunk is a correction: its answer, cited; undefined otherwise. */
export function correctionExtract(question: string, context: readonly ContextChunk[], isCorrection: (chunk: ContextChunk) => boolean): ExtractiveAnswer | undefined {
  const first = context[0];
  if (!first || !isCorrection(first)) return undefined;
  const parsed = parseCorrectionText(first.hit.chunk.text);
  if (!parsed?.answer) return undefined;
  const chinese = HAN.test(question);
  return { text: `${EXTRACTIVE_NOTICES[chinese ? 1 : 0]}\n\n${parsed.answer}${chinese ? "" : " "}[1]`, found: true, sources: [first] };
}
