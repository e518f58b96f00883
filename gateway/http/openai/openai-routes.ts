// The OpenAI-compatible surface: POST /v1/chat/completions (answers from an assistant or knowledge
// bases, streamed as OpenAI streams or whole), GET /v1/models (what the key may ask) and
// POST /v1/embeddings (the embedder's local models). Shapes are in chat-completion-shapes.ts and
// embedding-shapes.ts; this file only makes the calls.
import { EmbeddingKind } from "../../../gen/quarry/embedder/v1/embedder_pb.ts";
import type { ChatResponse } from "../../../gen/quarry/gateway/v1/gateway_pb.ts";
import { ErrorReasons, NotFoundError } from "../../../lib/errors.ts";
import type { GuardedRoute } from "../http-route.ts";
import { failureOf } from "../http-slot.ts";
import { openEventStream, sendEvent, sendJson } from "../wire.ts";
import { CollectedAnswer, completion, completionChunk, completionRequest, completionTargets, KB_MODEL_PREFIX, usageChunk } from "./chat-completion-shapes.ts";
import { embeddingRequest, embeddingResponse } from "./embedding-shapes.ts";
import { openAiError, openAiFailure } from "./openai-errors.ts";

export function openAiRoutes(): GuardedRoute[] {
  return [
    {
      name: "openai.chat-completions",
      methods: ["POST"],
      path: "/v1/chat/completions",
      role: "reader",
      scope: { kind: "check", targets: (input) => completionTargets(input.body) },
      body: "json",
      fail: openAiFailure,
      async handle(call) {
        const request = completionRequest(call.body);
        const created = Math.floor(Date.now() / 1000);
        const answer = new CollectedAnswer();
        const events = call.gateway.chat(request.chat, { signal: call.signal })[Symbol.asyncIterator]();
        // Whatever refuses the question (an unknown model, a bad setting) comes before the first event: a plain error response.
        const first = await events.next().catch((error) => {
          const failure = failureOf(error);
          throw failure.status === 404 ? new NotFoundError(`the model "${request.model}" is not an assistant or kb:<knowledge base> this key can use: ${failure.message}`, { reason: ErrorReasons.modelNotFound }) : error;
        });
        /** Takes one event in; returns the text it adds. */
        const absorb = ({ event }: ChatResponse): string => {
          const e = event?.event;
          if (e?.case === "started") [answer.conversationId, answer.turnId] = [e.value.conversationId, e.value.turnId];
          else if (e?.case === "text") answer.text += e.value.text;
          else if (e?.case === "citation") answer.citations.push(e.value);
          else if (e?.case === "final") answer.final = e.value;
          return e?.case === "text" ? e.value.text : "";
        };
        if (!request.stream) {
          for (let next = first; !next.done; next = await events.next()) absorb(next.value);
          return sendJson(call.res, 200, completion(answer, request.model, created));
        }
        openEventStream(call.res);
        try {
          let opened = false;
          for (let next = first; !next.done; next = await events.next()) {
            const text = absorb(next.value);
            if (!opened && answer.turnId) {
              sendEvent(call.res, completionChunk(answer, request.model, created, { role: "assistant", content: "" }));
              opened = true;
            }
            if (text) sendEvent(call.res, completionChunk(answer, request.model, created, { content: text }));
          }
          sendEvent(call.res, completionChunk(answer, request.model, created, {}, true));
          if (request.includeUsage) sendEvent(call.res, usageChunk(answer, request.model, created));
          sendEvent(call.res, "[DONE]");
        } catch (error) {
          // OpenAI's clients raise an event carrying `error` as an API error.
          sendEvent(call.res, openAiError(failureOf(error)));
        }
        call.res.end();
      },
    },
    {
      name: "openai.models",
      methods: ["GET"],
      path: "/v1/models",
      role: "reader",
      // Both listings come back filtered to the key's scope by the access rules.
      scope: { kind: "per-call" },
      body: "none",
      fail: openAiFailure,
      async handle(call) {
        const [{ assistants }, { knowledgeBases }] = await Promise.all([call.gateway.listAssistants({}, { signal: call.signal }), call.gateway.listKnowledgeBases({}, { signal: call.signal })]);
        const model = (id: string, created: bigint | undefined) => ({ id, object: "model", created: Number(created ?? 0n), owned_by: "quarry" });
        sendJson(call.res, 200, {
          object: "list",
          data: [...assistants.map((a) => model(a.name, a.createdAt?.seconds)), ...knowledgeBases.map((kb) => model(`${KB_MODEL_PREFIX}${kb.name}`, kb.createdAt?.seconds))],
        });
      },
    },
    {
      name: "openai.embeddings",
      methods: ["POST"],
      path: "/v1/embeddings",
      role: "reader",
      scope: { kind: "none", why: "embeds the request's own text with a local model: no knowledge base is read" },
      body: "json",
      fail: openAiFailure,
      async handle(call) {
        const request = embeddingRequest(call.body);
        const response = await call.embedder.embed({ texts: request.texts, kind: EmbeddingKind.DOCUMENT, model: request.model }, { signal: call.signal }).catch((error) => {
          const failure = failureOf(error);
          throw failure.status === 404 ? new NotFoundError(`the model "${request.model}" is not an embedding model this Quarry serves: ${failure.message}`, { reason: ErrorReasons.modelNotFound }) : error;
        });
        sendJson(call.res, 200, embeddingResponse(response, request));
      },
    },
  ];
}
