export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatModel {
  readonly name: string;
  /** Streams text deltas; usage is reported through onUsage when the endpoint sends it. */
  stream(messages: ChatMessage[], options: { signal?: AbortSignal; onUsage?: (usage: ChatUsage) => void }): AsyncIterable<string>;
}
