// What a managed correction looks like as a document: the gateway writes it (CorrectAnswer), the
// answer service reads it back from a retrieved chunk. Two services share it, so it lives here.
//
// The text is "Question: …" on one line per wording, a blank line, then "Answer: …": the wordings
// are what a later question is matched against, the answer is what the chunk's citation shows and what the
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

/** The wordings of a correction's question: one per line, spaces collapsed, empty lines and repeats dropped. */
export function questionWordings(text: string): string[] {
  return [...new Set(text.split(/\r?\n/).map((line) => line.replace(/\s+/g, " ").trim()).filter(Boolean))];
}

export function correctionDocumentText(questions: readonly string[], answer: string): string {
  return `${questions.map((q) => `Question: ${q}\n`).join("")}\nAnswer: ${answer.trim()}\n`;
}

export interface CorrectionText {
  questions: string[];
  answer: string;
}

const SHAPE = /^\s*((?:Question:[^\n]*\n\s*)+)Answer:[ \t]*([\s\S]*?)\s*$/;

/**
 * The question wordings and answer of a correction's text; undefined for text that does not start
 * with them (a long correction's later chunk: the answer service reads a correction whole first,
 * services/answer/retrieval/whole-corrections.ts).
 */
export function parseCorrectionText(text: string): CorrectionText | undefined {
  const match = SHAPE.exec(text);
  if (!match) return undefined;
  const questions = questionWordings(match[1].replace(/^\s*Question:/gm, ""));
  return questions.length > 0 ? { questions, answer: match[2] } : undefined;
}
