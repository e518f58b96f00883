import type { ChatMessage, ChatModel } from "./chat-model.ts";

/** The model's whole reply to a prompt, for the short answers retrieval asks for (a query, a score). */
export async function complete(model: ChatModel, messages: ChatMessage[], signal?: AbortSignal): Promise<string> {
  let text = "";
  for await (const delta of model.stream(messages, { signal })) text += delta;
  return text.trim();
}
