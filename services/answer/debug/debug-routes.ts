// DebugRetrieval's RPC edge: the request as the domain's DebugRequest; the report is already the
// protobuf message.
import type { DebugRetrievalRequest, RetrievalDebugReport } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import { modeFromProto } from "../../../lib/proto-convert.ts";
import type { AnswerApplication, RetrievalOptions } from "../answer-service.ts";
import type { DebugRequest } from "./debug-plan.ts";

export function debugRequestFromProto(request: DebugRetrievalRequest, options: RetrievalOptions): DebugRequest {
  const s = request.settings;
  return {
    turnId: request.turnId,
    query: request.query,
    knowledgeBases: [...request.knowledgeBaseIds],
    assistant: request.assistant,
    // Unset fields stay unset, so the turn's or the assistant's settings apply.
    overrides: { ...options, mode: s?.mode ? modeFromProto(s.mode) : undefined },
    expect: { text: request.expect?.text ?? "", chunkId: request.expect?.chunkId ?? "", documentId: request.expect?.documentId ?? "" },
    deepWindow: request.deepWindow,
  };
}

export async function debugRetrievalHandler(app: AnswerApplication, request: DebugRetrievalRequest, options: RetrievalOptions, signal: AbortSignal): Promise<{ report: RetrievalDebugReport }> {
  return { report: await app.debugRetrieval(debugRequestFromProto(request, options), signal) };
}
