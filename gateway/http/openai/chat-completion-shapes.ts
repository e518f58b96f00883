// OpenAI's chat completion ↔ Quarry's Chat: the request's `model` names an assistant, or
// `kb:<name>[,<name>…]` for knowledge bases without one; its messages are the conversation (the
// last user message is the question, the user/assistant pairs before it the history; system
// messages are left to the assistant's own prompt). The answer keeps its [n] markers, and the
// citations travel in a `quarry` extension: on the message of a completion and on the last chunk
// of a stream (docs/INTEGRATIONS.md, "OpenAI-compatible chat").
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import type { ChatFinal } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { RetrievalSettingsSchema } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import type { Citation } from "../../../gen/quarry/common/v1/common_pb.ts";
import { ChatRequestSchema, type ChatRequest } from "../../../gen/quarry/gateway/v1/gateway_pb.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { citedSource, type CitedSource } from "../../cited-source.ts";
import type { Targets } from "../../access/access-rules.ts";

/** `model` for knowledge bases without an assistant: `kb:handbook` or `kb:handbook,policies`. */
export const KB_MODEL_PREFIX = "kb:";

export interface CompletionRequest {
  chat: ChatRequest;
  model: string;
  stream: boolean;
  includeUsage: boolean;
}

interface WireMessage {
  role?: unknown;
  content?: unknown;
}

/** What `model` names: an assistant, or knowledge bases. */
export function modelTargets(model: string): Pick<ChatRequest, "assistant" | "knowledgeBases"> {
  if (!model.startsWith(KB_MODEL_PREFIX)) return { assistant: model, knowledgeBases: [] };
  const names = model.slice(KB_MODEL_PREFIX.length).split(",").map((n) => n.trim()).filter(Boolean);
  if (names.length === 0) throw new InvalidInputError(`"${model}" names no knowledge base: use kb:<name>[,<name>…]`);
  return { assistant: "", knowledgeBases: names };
}

/** For the door: what a scoped key must be allowed to read. */
export function completionTargets(body: unknown): Targets {
  const model = modelOf(body);
  const { assistant, knowledgeBases } = modelTargets(model);
  return assistant ? { assistants: [assistant] } : { knowledgeBases };
}

function modelOf(body: unknown): string {
  const model = (body as { model?: unknown } | undefined)?.model;
  if (typeof model !== "string" || !model.trim()) throw new InvalidInputError("`model` is required: an assistant's name, or kb:<knowledge base>[,<knowledge base>…] (GET /v1/models lists them)");
  return model.trim();
}

export function completionRequest(body: unknown): CompletionRequest {
  const model = modelOf(body);
  const given = body as { messages?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown }; quarry?: { settings?: unknown } };
  if (!Array.isArray(given.messages) || given.messages.length === 0) throw new InvalidInputError("`messages` must be a non-empty array of {role, content}");
  const history: { question: string; answer: string }[] = [];
  let asked: string | undefined;
  for (const [i, message] of (given.messages as WireMessage[]).entries()) {
    const role = message?.role;
    if (role === "system" || role === "developer") continue;
    const text = textOf(message.content, i);
    if (role === "user") asked = asked === undefined ? text : `${asked}\n${text}`;
    else if (role === "assistant") {
      history.push({ question: asked ?? "", answer: text });
      asked = undefined;
    } else throw new InvalidInputError(`messages[${i}].role is ${JSON.stringify(role)}: Quarry reads system, user and assistant messages`);
  }
  if (asked === undefined || !asked.trim()) throw new InvalidInputError("the last message must be the user's question");
  let settings;
  if (given.quarry?.settings !== undefined) {
    try {
      settings = fromJson(RetrievalSettingsSchema, given.quarry.settings as JsonValue);
    } catch (error) {
      throw new InvalidInputError(`quarry.settings is not a quarry.answer.v1.RetrievalSettings in JSON: ${(error as Error).message}`);
    }
  }
  return {
    model,
    stream: given.stream === true,
    includeUsage: given.stream_options?.include_usage === true,
    chat: create(ChatRequestSchema, { question: asked, ...modelTargets(model), history, settings }),
  };
}

function textOf(content: unknown, i: number): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part: { type?: unknown; text?: unknown }) => {
        if (part?.type === "text" && typeof part.text === "string") return part.text;
        throw new InvalidInputError(`messages[${i}] holds a ${JSON.stringify(part?.type)} part: Quarry reads text only`);
      })
      .join("");
  }
  throw new InvalidInputError(`messages[${i}].content must be text`);
}

/** A citation in the extension (gateway/cited-source.ts). */
export type WireCitation = CitedSource;

export interface QuarryExtension {
  conversation_id: string;
  turn_id: string;
  citations: WireCitation[];
  /** The chat model that wrote the answer ("" when extractive). */
  answer_model: string;
  extractive: boolean;
  unsupported_markers: number;
  /** False when the evidence did not support an answer: the text says so and the citations are the closest passages. */
  answered: boolean;
  answered_reason: string;
}

/** Everything a Chat stream said, gathered as it arrives. */
export class CollectedAnswer {
  conversationId = "";
  turnId = "";
  text = "";
  citations: Citation[] = [];
  final: ChatFinal | undefined;

  extension(): QuarryExtension {
    return {
      conversation_id: this.conversationId,
      turn_id: this.turnId,
      citations: this.citations.map((c) => citedSource(c, this.final)),
      answer_model: this.final?.model ?? "",
      extractive: this.final?.extractive ?? false,
      unsupported_markers: this.final?.unsupportedMarkers ?? 0,
      answered: this.final?.answered ?? false,
      answered_reason: this.final?.answeredReason ?? "",
    };
  }

  usage() {
    const u = this.final?.usage;
    const prompt = u?.promptTokens ?? 0;
    const completion = u?.completionTokens ?? 0;
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }
}

export function completion(answer: CollectedAnswer, model: string, created: number) {
  return {
    id: `chatcmpl-${answer.turnId}`,
    object: "chat.completion",
    created,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: answer.text, refusal: null, quarry: answer.extension() }, finish_reason: "stop", logprobs: null }],
    usage: answer.usage(),
  };
}

/** One streamed chunk; `last` adds the finish reason and the extension. */
export function completionChunk(answer: CollectedAnswer, model: string, created: number, delta: Record<string, unknown>, last = false) {
  return {
    id: `chatcmpl-${answer.turnId}`,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: last ? "stop" : null, logprobs: null }],
    ...(last ? { quarry: answer.extension() } : {}),
  };
}

export function usageChunk(answer: CollectedAnswer, model: string, created: number) {
  return { id: `chatcmpl-${answer.turnId}`, object: "chat.completion.chunk", created, model, choices: [], usage: answer.usage() };
}
