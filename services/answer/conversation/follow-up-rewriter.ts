// A follow-up ("and how tall is it?") means nothing to a search engine without the conversation
// before it. With a chat model configured, the follow-up is rewritten into a standalone question
// for retrieval; the model still answers the question as asked, with the history beside it.
import type { ChatMessage, ChatModel } from "../chat-models/chat-model.ts";
import { analyseQuestion } from "../answering/question-analysis.ts";

/** The prompt's marker; the OpenAI-compatible test stub recognises rewrite requests by it. */
export const REWRITE_INSTRUCTION = "Rewrite the user's last question as one standalone question";

const SYSTEM = `${REWRITE_INSTRUCTION} that can be understood without the conversation: replace pronouns and references ("it", "that one", "the second") with what they refer to, keep every constraint the user stated, and keep the user's language. Do not answer it. Reply with the question only, on one line.`;

export interface RewriteOutcome {
  /** The standalone question, or undefined when the model gave nothing usable. */
  query?: string;
  note: string;
}

/** Conversation so far as plain text for the rewrite prompt: it needs the topic, not the citations. */
function transcript(history: ChatMessage[]): string {
  return history.map((m) => `${m.role === "user" ? "User" : "Assistant"}: ${m.content.replace(/\s+/g, " ").trim()}`).join("\n");
}

export async function rewriteFollowUp(
  model: ChatModel,
  history: ChatMessage[],
  question: string,
  options: { maxChars: number; signal?: AbortSignal },
): Promise<RewriteOutcome> {
  const messages: ChatMessage[] = [
    { role: "system", content: SYSTEM },
    { role: "user", content: `Conversation:\n${transcript(history)}\n\nLast question: ${question}` },
  ];
  let text = "";
  for await (const delta of model.stream(messages, { signal: options.signal })) text += delta;
  const query = cleanRewrite(text);
  if (!query) return { note: `${model.name} returned no question; searched as asked` };
  if (query.length > options.maxChars) return { note: `${model.name}'s rewrite was longer than ${options.maxChars} characters; searched as asked` };
  return { query, note: `rewritten by ${model.name}` };
}

/** The first non-empty line, without a "Question:" label or surrounding quotes. */
export function cleanRewrite(text: string): string {
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l.length > 0) ?? "";
  return line
    .replace(/^(standalone question|question|rewritten question)\s*[:：]\s*/i, "")
    .replace(/^["'“”「」『』]+|["'“”「」『』]+$/g, "")
    .trim();
}

/**
 * Without a chat model: the follow-up searched together with the content words of the question
 * before it that the follow-up does not repeat. Words, not
 * the whole question, so its question words and phrasing do not steer the search.
 */
export function withPreviousTerms(previous: string, followUp: string): { query: string; terms: string[] } {
  const own = new Set(analyseQuestion(followUp).terms);
  const terms = analyseQuestion(previous).terms.filter((t) => !own.has(t));
  return { query: terms.length ? `${terms.join(" ")} ${followUp}` : followUp, terms };
}
