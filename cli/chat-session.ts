// `quarry chat`: a conversation at the terminal. Each line read from stdin is a question; the
// answer streams back with its sources, and the next question continues the same conversation
// (the gateway keeps it; --conversation resumes one). Works the same with stdin piped, for scripts
// and tests: one question per line, the conversation's id printed at the end.
import { createInterface } from "node:readline";
import { QueryRewrite } from "../gen/quarry/answer/v1/answer_pb.ts";
import type { RetrievalMode } from "../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "../client/gateway-client.ts";
import { sourcesHeading } from "./commands.ts";
import { traceLine } from "./trace-line.ts";

export interface ChatSessionOptions {
  assistant?: string;
  knowledgeBases: string[];
  conversationId?: string;
  mode?: RetrievalMode;
  topK?: number;
  input: NodeJS.ReadableStream;
  out: NodeJS.WritableStream;
  /** Show a prompt before each question (a terminal). */
  interactive: boolean;
  /** A question that failed: reported, and the session goes on (the conversation is kept). */
  onError(error: unknown): void;
}

/** Runs the session until end of input or `/exit`; returns the conversation's id ("" when nothing was asked). */
export async function chatSession(client: QuarryClient, options: ChatSessionOptions): Promise<string> {
  const { out } = options;
  let conversationId = options.conversationId ?? "";
  const lines = createInterface({ input: options.input, terminal: false });
  const prompt = () => options.interactive && out.write("> ");
  prompt();
  for await (const raw of lines) {
    const question = raw.trim();
    if (question === "/exit" || question === "/quit") break;
    if (!question) {
      prompt();
      continue;
    }
    try {
      conversationId = await askInConversation(client, question, conversationId, options);
    } catch (error) {
      options.onError(error);
    }
    prompt();
  }
  lines.close();
  if (conversationId) out.write(`conversation ${conversationId} — resume with: quarry chat --conversation ${conversationId}\n`);
  return conversationId;
}

async function askInConversation(client: QuarryClient, question: string, conversationId: string, options: ChatSessionOptions): Promise<string> {
  const { out } = options;
  const sources: { marker: number; fileName: string; page: number; sectionPath: string[]; snippet: string }[] = [];
  const first = !conversationId;
  const stream = client.chat({
    question,
    conversationId,
    // A conversation remembers its assistant or bases; only a new one names them.
    assistant: first ? (options.assistant ?? "") : "",
    knowledgeBases: first ? options.knowledgeBases : [],
    settings: { mode: options.mode ?? 0, topK: options.topK ?? 0 },
  });
  let turnId = "";
  let traceId = "";
  let answered = true;
  for await (const { event } of stream) {
    const e = event?.event;
    if (e?.case === "started") {
      conversationId = e.value.conversationId;
      turnId = e.value.turnId;
      traceId = e.value.traceId;
    } else if (e?.case === "text") out.write(e.value.text);
    else if (e?.case === "citation") sources.push(e.value);
    else if (e?.case === "final") {
      out.write("\n");
      if (e.value.rewrite === QueryRewrite.REWRITTEN) out.write(`(searched for: ${e.value.retrievalQuery})\n`);
      if (e.value.rewrite === QueryRewrite.NO_MODEL) out.write("(no chat model to rewrite a follow-up: searched for the question as asked)\n");
      if (e.value.rewrite === QueryRewrite.PREVIOUS_TERMS) out.write(`(no chat model: searched for the follow-up with the previous question's words: ${e.value.retrievalQuery})\n`);
      answered = e.value.answered;
      if (!answered) out.write(`(not answered: ${e.value.answeredReason})\n`);
    }
  }
  if (sources.length) out.write(sourcesHeading(answered));
  for (const c of sources) {
    const where = [c.fileName, c.page ? `p. ${c.page}` : "", c.sectionPath.join(" > ")].filter(Boolean).join(", ");
    out.write(`  [${c.marker}] ${where}\n      ${c.snippet.replace(/\s+/g, " ").slice(0, 160)}\n`);
  }
  out.write(await traceLine(client, "trace", traceId));
  out.write(`(turn ${turnId})\n\n`);
  return conversationId;
}
