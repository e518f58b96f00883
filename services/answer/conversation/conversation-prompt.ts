// The messages for an answer inside a conversation: the assistant's own instructions before the
// rules on citing, the earlier rounds as history, then the numbered context (grouped by knowledge
// base, file names hidden when the assistant says so) and the question.
import type { ChatMessage } from "../chat-models/chat-model.ts";
import type { ContextChunk } from "../answering/context-builder.ts";
import { buildMessages } from "../answering/prompt.ts";

export interface ConversationPromptOptions {
  /** The assistant's instructions; empty: the rules alone. */
  systemPrompt: string;
  history: ChatMessage[];
  hideFileNames: boolean;
  /** Knowledge base id → name, for the group headers; one base or none: no headers. */
  baseNames: Map<string, string>;
}

const MARKERS = /\s*(?:\[\d+\]|【\d+】)/g;

/**
 * Earlier turns as alternating user and assistant messages, the last `rounds` of them. Their
 * citation markers are removed: they numbered another turn's context and would be read as this one's.
 */
export function historyMessages(turns: { question: string; answer: string }[], rounds: number): ChatMessage[] {
  if (rounds <= 0) return [];
  return turns.slice(-rounds).flatMap((t): ChatMessage[] => [
    { role: "user", content: t.question },
    { role: "assistant", content: t.answer.replace(MARKERS, "").trim() },
  ]);
}

export function conversationMessages(question: string, chunks: readonly ContextChunk[], options: ConversationPromptOptions): ChatMessage[] {
  const [system, user] = buildMessages(question, renderGroupedContext(chunks, options));
  const instructions = options.systemPrompt.trim();
  return [{ role: "system", content: instructions ? `${instructions}\n\n${system.content}` : system.content }, ...options.history, user];
}

/** Each chunk under `[n] (source)`; a header before each knowledge base's chunks when there are several. */
export function renderGroupedContext(chunks: readonly ContextChunk[], options: Pick<ConversationPromptOptions, "hideFileNames" | "baseNames">): string {
  const grouped = new Set(chunks.map((c) => c.hit.chunk.knowledgeBaseId)).size > 1;
  const parts: string[] = [];
  let base: string | undefined;
  for (const c of chunks) {
    const kb = c.hit.chunk.knowledgeBaseId;
    if (grouped && kb !== base) {
      parts.push(`Knowledge base: ${options.baseNames.get(kb) ?? kb}`);
      base = kb;
    }
    parts.push(`[${c.number}]${source(c, options.hideFileNames)}\n${c.hit.chunk.text.trim()}`);
  }
  return parts.join("\n\n");
}

function source(c: ContextChunk, hideFileNames: boolean): string {
  const { page, pageEnd, sectionPath } = c.hit.chunk;
  const parts = hideFileNames ? [] : [c.hit.fileName];
  if (page > 0) parts.push(pageEnd > page ? `pp. ${page}–${pageEnd}` : `p. ${page}`);
  if (sectionPath.length > 0) parts.push(sectionPath.join(" > "));
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}
