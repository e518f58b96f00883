// What a managed correction looks like as a document: the gateway writes it (CorrectAnswer), the
// answer service reads it back from a retrieved chunk. Two services share it, so it lives here.
//
// The text is "Question: …" on one line, a blank line, then "Answer: …": the question is what a
// later question is matched against, the answer is what the chunk's citation shows and what the
// extractive answerer repeats. The metadata repeats both for listings, with who corrected what.

/** Document metadata keys of a correction. */
export const CORRECTION_METADATA = {
  turnId: "correction.turn_id",
  question: "correction.question",
  originalQuestion: "correction.original_question",
  answer: "correction.answer",
  author: "correction.author",
  createdAt: "correction.created_at",
  assistantId: "correction.assistant_id",
} as const;

export function correctionDocumentText(question: string, answer: string): string {
  return `Question: ${question.replace(/\s+/g, " ").trim()}\n\nAnswer: ${answer.trim()}\n`;
}

export interface CorrectionText {
  question: string;
  answer: string;
}

const SHAPE = /^\s*Question:[ \t]*([^\n]*?)[ \t]*\n\s*Answer:[ \t]*([\s\S]*?)\s*$/;

/**
 * The question and answer of a correction's chunk; undefined for a chunk that does not start with
 * the question (a long answer's later chunk), which can then not be matched on its own.
 */
export function parseCorrectionText(text: string): CorrectionText | undefined {
  const match = SHAPE.exec(text);
  if (!match || !match[1]) return undefined;
  return { question: match[1], answer: match[2] };
}
