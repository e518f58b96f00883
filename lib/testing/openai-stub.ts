// A real HTTP server that speaks the parts of the OpenAI API Quarry uses, for tests of the OpenAI
// adapters and for `quarry bench chat`: /v1/chat/completions (streamed as server-sent events exactly
// like the real API, or a single JSON body) and /v1/embeddings (deterministic hashing vectors).
// Replies are scripted by the test; every request is recorded.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hashingVector } from "./hashing-embedder.ts";

export interface StubChatMessage {
  role: string;
  content: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** A scripted failure: the stub answers with this status and an OpenAI-style error body. */
export interface StubFailure {
  status: number;
  message: string;
}

export interface OpenAiStubOptions {
  /** The assistant's reply for a chat request; defaults to echoing the last user message. */
  reply?: (messages: StubChatMessage[], body: any) => string;
  /** How a reply is cut into streamed deltas; defaults to 3 characters each so markers split across deltas. */
  split?: (reply: string) => string[];
  /** A pause between streamed deltas, as a real model takes (0 by default: all at once). */
  deltaDelayMs?: number;
  /** A pause before each /v1/embeddings answer, as a real endpoint takes (0 by default). */
  embeddingDelayMs?: number;
  /** Vector length /v1/embeddings returns when the request does not ask for `dimensions`. */
  embeddingDimension?: number;
  /** Multiplies every returned vector, to imitate servers that do not normalise. Default 1. */
  embeddingScale?: number;
  /** Return a failure to make the stub answer that request with an error instead. */
  fail?: (request: RecordedRequest) => StubFailure | undefined;
  /**
   * Scripts query rewriting: a chat request whose system message contains `marker` (the rewrite
   * prompt's wording) is answered by `reply` instead of the answer script. The last user message
   * carries the conversation and the question to rewrite.
   */
  rewrite?: { marker: string; reply: (lastUser: string, messages: StubChatMessage[]) => string };
}

/** Whether a recorded chat request was a rewrite request (see OpenAiStubOptions.rewrite). */
export function isRewriteRequest(request: RecordedRequest, marker: string): boolean {
  return request.path === "/v1/chat/completions" && (request.body?.messages ?? []).some((m: StubChatMessage) => m.role === "system" && m.content.includes(marker));
}

export interface OpenAiStub {
  /** Base URL for the openai client, ending in /v1. */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startOpenAiStub(options: OpenAiStubOptions = {}): Promise<OpenAiStub> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    handle(req, res, options, requests).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, `stub failure: ${String(err)}`, "server_error");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, options: OpenAiStubOptions, requests: RecordedRequest[]): Promise<void> {
  const raw = await readBody(req);
  const path = new URL(req.url ?? "/", "http://stub").pathname;
  let body: any = undefined;
  try {
    body = raw ? JSON.parse(raw) : undefined;
  } catch {
    return sendError(res, 400, "We could not parse the JSON body of your request.", "invalid_request_error");
  }
  const request: RecordedRequest = { method: req.method ?? "GET", path, headers: req.headers, body };
  requests.push(request);

  const failure = options.fail?.(request);
  if (failure) return sendError(res, failure.status, failure.message, failure.status >= 500 ? "server_error" : "invalid_request_error");
  if (req.method === "POST" && path === "/v1/chat/completions") return chat(res, body, options);
  if (req.method === "POST" && path === "/v1/embeddings") {
    if (options.embeddingDelayMs) await new Promise((resolve) => setTimeout(resolve, options.embeddingDelayMs));
    return embeddings(res, body, options);
  }
  sendError(res, 404, `Invalid URL (${req.method} ${path})`, "invalid_request_error");
}

async function chat(res: ServerResponse, body: any, options: OpenAiStubOptions): Promise<void> {
  const messages: StubChatMessage[] = body?.messages ?? [];
  if (!body?.model || messages.length === 0) {
    return sendError(res, 400, "you must provide a model parameter and at least one message", "invalid_request_error");
  }
  const rewrite = options.rewrite && messages.some((m) => m.role === "system" && m.content.includes(options.rewrite!.marker));
  const reply = rewrite ? options.rewrite!.reply(echoLastUser(messages), messages) : (options.reply ?? echoLastUser)(messages, body);
  const id = `chatcmpl-stub${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = {
    // Roughly four characters a token, like the real tokenizer on English; deterministic for tests.
    prompt_tokens: Math.ceil(messages.reduce((n, m) => n + m.content.length, 0) / 4),
    completion_tokens: Math.ceil(reply.length / 4),
    total_tokens: 0,
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;

  if (!body.stream) {
    return sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: reply, refusal: null }, logprobs: null, finish_reason: "stop" }],
      usage,
    });
  }

  const includeUsage = body.stream_options?.include_usage === true;
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, system_fingerprint: null, choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`,
    );
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({ index: 0, delta, logprobs: null, finish_reason: finish });
  // The real API opens with the role and an empty content, then content deltas, then the finish reason.
  send([choice({ role: "assistant", content: "", refusal: null })]);
  for (const piece of (options.split ?? splitEvery(3))(reply)) {
    send([choice({ content: piece })]);
    if (options.deltaDelayMs) await new Promise((resolve) => setTimeout(resolve, options.deltaDelayMs));
  }
  send([choice({}, "stop")]);
  if (includeUsage) send([], { usage });
  res.end("data: [DONE]\n\n");
}

function embeddings(res: ServerResponse, body: any, options: OpenAiStubOptions): void {
  const inputs: unknown = body?.input;
  const texts = typeof inputs === "string" ? [inputs] : inputs;
  if (!body?.model || !Array.isArray(texts) || texts.length === 0 || texts.some((t) => typeof t !== "string")) {
    return sendError(res, 400, "'input' must be a non-empty string or array of strings", "invalid_request_error");
  }
  if (texts.some((t) => t === "")) return sendError(res, 400, "'$.input' is invalid: empty strings are not allowed", "invalid_request_error");
  const dimension: number = body.dimensions ?? options.embeddingDimension ?? 384;
  const base64 = body.encoding_format === "base64";
  sendJson(res, 200, {
    object: "list",
    data: (texts as string[]).map((text, index) => {
      const vector = hashingVector(text, dimension).map((x) => x * (options.embeddingScale ?? 1));
      return { object: "embedding", index, embedding: base64 ? Buffer.from(vector.buffer).toString("base64") : Array.from(vector) };
    }),
    model: body.model,
    usage: { prompt_tokens: texts.length, total_tokens: texts.length },
  });
}

function echoLastUser(messages: StubChatMessage[]): string {
  return [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
}

function splitEvery(size: number): (text: string) => string[] {
  return (text) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, i * size + size));
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(payload));
}

function sendError(res: ServerResponse, status: number, message: string, type: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}
