import type { ChatMessage } from "../chat-models/chat-model.ts";

// One prompt for every language: the model is told to answer in the question's language, and the
// context headers are plain enough to read in any. Markers are ASCII [n]; models writing Chinese
// often use 【n】 anyway, which the citation mapper accepts.
const SYSTEM_PROMPT = `You answer questions using only the numbered context passages you are given.

Rules:
- Use only facts stated in the context. Do not add knowledge from elsewhere, even if you are sure of it.
- After every sentence or clause that uses a passage, cite it with its number in square brackets, like [1]. Cite several passages as [1][3]. Cite only numbers that appear in the context.
- If the context does not contain the answer, say "I don't know" (in the language of the question) and, in one sentence, what the context does cover. Do not guess.
- If passages disagree, say so and cite each.
- Answer in the same language as the question, even when the passages are in another language.
- Be concise. Do not mention "the context" or "the passages"; just answer and cite.`;

/** The messages for a grounded answer: rules in the system message, context then question in the user message. */
export function buildMessages(question: string, contextBlock: string): ChatMessage[] {
  const user = contextBlock.trim()
    ? `Context:\n\n${contextBlock}\n\nQuestion: ${question}`
    : `Context:\n\n(no passages were found)\n\nQuestion: ${question}`;
  return [
    { role: "system", content: SYSTEM_PROMPT },
    { role: "user", content: user },
  ];
}
