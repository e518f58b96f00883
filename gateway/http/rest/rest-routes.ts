// Plain HTTP for the common calls, so curl works without protobuf framing: search, ask (answers
// streamed as server-sent events), upload a file (multipart), a document's status and its original
// (streamed from the blob store). Bodies and
// responses are the Connect JSON form of the same QuarryService messages (docs/INTEGRATIONS.md, "Plain HTTP (curl)"), and
// errors are Connect's JSON error shape, so a person can move between the two without relearning.
import { fromJson, toJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { ChatRequestSchema, ChatResponseSchema, GetDocumentResponseSchema, SearchRequestSchema, SearchResponseSchema, UploadDocumentResponseSchema } from "../../../gen/quarry/gateway/v1/gateway_pb.ts";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import type { BlobStore } from "../../../lib/blobs/blob-store.ts";
import { InvalidInputError, NotFoundError } from "../../../lib/errors.ts";
import { Originals } from "../../originals.ts";
import { ruleFor } from "../../access/access-rules.ts";
import type { UploadLimits } from "../../upload.ts";
import type { GuardedRoute, RouteInput } from "../http-route.ts";
import { failureOf } from "../http-slot.ts";
import { connectJsonFailure, openEventStream, sendEvent, sendJson } from "../wire.ts";
import { readUpload } from "./multipart-upload.ts";

/** The body as the Connect JSON form of `schema`; a person's mistake (unknown field, wrong type) is INVALID_ARGUMENT. */
export function messageOf<S extends DescMessage>(schema: S, body: unknown): MessageShape<S> {
  try {
    return fromJson(schema, body as JsonValue);
  } catch (error) {
    throw new InvalidInputError(`the body is not a ${schema.typeName} in JSON: ${(error as Error).message}`);
  }
}

const searchRequest = (input: RouteInput) => messageOf(SearchRequestSchema, input.body);
const chatRequest = (input: RouteInput) => messageOf(ChatRequestSchema, input.body);

export function restRoutes(limits: UploadLimits, blobs: BlobStore): GuardedRoute[] {
  const originals = new Originals(blobs);
  return [
    {
      name: "rest.search",
      methods: ["POST"],
      path: "/v1/search",
      role: "reader",
      scope: { kind: "check", targets: (input) => ruleFor("search")!.targets!(searchRequest(input) as never) },
      body: "json",
      fail: connectJsonFailure,
      async handle(call) {
        const response = await call.gateway.search(searchRequest(call), { signal: call.signal });
        sendJson(call.res, 200, toJson(SearchResponseSchema, response));
      },
    },
    {
      name: "rest.ask",
      methods: ["POST"],
      path: "/v1/ask",
      role: "reader",
      scope: { kind: "check", targets: (input) => ruleFor("chat")!.targets!(chatRequest(input) as never) },
      body: "json",
      fail: connectJsonFailure,
      async handle(call) {
        const events = call.gateway.chat(chatRequest(call), { signal: call.signal })[Symbol.asyncIterator]();
        // The first event decides the status: a refusal before any answer is a plain error response.
        const first = await events.next();
        openEventStream(call.res);
        try {
          for (let next = first; !next.done; next = await events.next()) {
            const event = next.value.event!;
            sendEvent(call.res, toJson(ChatResponseSchema, next.value), event.event.case);
          }
          sendEvent(call.res, {}, "done");
        } catch (error) {
          const failure = failureOf(error);
          sendEvent(call.res, { code: failure.code, message: failure.message }, "error");
        }
        call.res.end();
      },
    },
    {
      name: "rest.upload",
      methods: ["POST"],
      path: "/v1/knowledge-bases/:knowledgeBase/documents",
      role: "editor",
      scope: { kind: "check", targets: (input) => ({ knowledgeBases: [input.params.knowledgeBase] }) },
      body: "raw",
      fail: connectJsonFailure,
      async handle(call) {
        const upload = await readUpload(call.req, limits.maxUploadBytes);
        const response = await call.gateway.uploadDocument(
          { header: { knowledgeBase: call.params.knowledgeBase, fileName: upload.fileName, mimeType: upload.mimeType, metadata: upload.metadata }, content: upload.content },
          { signal: call.signal },
        );
        sendJson(call.res, 200, toJson(UploadDocumentResponseSchema, response));
      },
    },
    {
      name: "rest.document",
      methods: ["GET"],
      path: "/v1/documents/:documentId",
      role: "reader",
      scope: { kind: "check", targets: (input) => ({ documents: [input.params.documentId] }) },
      body: "none",
      fail: connectJsonFailure,
      async handle(call) {
        const response = await call.gateway.getDocument({ documentId: call.params.documentId }, { signal: call.signal });
        sendJson(call.res, 200, toJson(GetDocumentResponseSchema, response));
      },
    },
    {
      name: "rest.original",
      methods: ["GET"],
      path: "/v1/documents/:documentId/original",
      role: "reader",
      scope: { kind: "check", targets: (input) => ({ documents: [input.params.documentId] }) },
      body: "none",
      fail: connectJsonFailure,
      async handle(call) {
        // Through the API first: the caller may read the document, and it exists.
        const { document } = await call.gateway.getDocument({ documentId: call.params.documentId }, { signal: call.signal });
        const body = await originals.open(document!.knowledgeBaseId, document!.id);
        if (!body) throw new NotFoundError(`the original of ${document!.fileName} was not kept (a producer outside Quarry submitted it, or it predates kept originals): upload it again`);
        call.res.writeHead(200, {
          "content-type": document!.mimeType || "application/octet-stream",
          "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(document!.fileName.split("/").pop()!)}`,
        });
        await pipeline(Readable.from(body), call.res as NodeJS.WritableStream, { signal: call.signal });
      },
    },
  ];
}
