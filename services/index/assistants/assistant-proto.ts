// An assistant ↔ its protobuf message (quarry.common.v1.Assistant), the one mapping: the routes
// answer with it, and the stores and archives keep an assistant's settings as its protobuf JSON,
// so settings added to the message later are kept by indexes that do not know them yet.
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  AssistantRetrievalSchema,
  AssistantSchema,
  QueryRewriteMode as QueryRewriteModeProto,
  type Assistant as AssistantProto,
  type AssistantRetrieval as AssistantRetrievalProto,
} from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { RetrievalMode as RetrievalModeProto } from "../../../gen/quarry/common/v1/common_pb.ts";
import { fusionFromProto, fusionToProto } from "../../../lib/proto-convert.ts";
import type { Assistant, AssistantRetrieval, AssistantSettings, JsonObject, QueryRewriteMode, RetrievalMode } from "../../../lib/domain.ts";

const MODES: [RetrievalModeProto, RetrievalMode][] = [
  [RetrievalModeProto.HYBRID, "hybrid"],
  [RetrievalModeProto.BM25, "bm25"],
  [RetrievalModeProto.VECTOR, "vector"],
];
const REWRITES: [QueryRewriteModeProto, QueryRewriteMode][] = [
  [QueryRewriteModeProto.NONE, "none"],
  [QueryRewriteModeProto.REWRITE, "rewrite"],
  [QueryRewriteModeProto.HYDE, "hyde"],
  [QueryRewriteModeProto.MULTI_QUERY, "multi_query"],
];

/** Times and id are left unset when the assistant has none yet (settings a caller sent, an archived assistant). */
export function assistantToProto(a: AssistantSettings & Partial<Pick<Assistant, "id" | "createdAt" | "updatedAt">>): AssistantProto {
  return create(AssistantSchema, {
    id: a.id ?? "",
    name: a.name,
    description: a.description,
    systemPrompt: a.systemPrompt,
    knowledgeBases: a.knowledgeBases.map((m) => ({ knowledgeBase: m.knowledgeBase, topK: m.topK, priority: m.priority })),
    retrieval: a.retrieval && retrievalToProto(a.retrieval),
    hideFileNames: a.hideFileNames,
    correctionsKnowledgeBaseId: a.correctionsKnowledgeBaseId,
    createdAt: a.createdAt && timestampFromDate(a.createdAt),
    updatedAt: a.updatedAt && timestampFromDate(a.updatedAt),
  });
}

/** The settings of the message; its id and times, a caller's to read only, are left out. */
export function assistantSettingsFromProto(p: AssistantProto): AssistantSettings {
  return {
    name: p.name,
    description: p.description,
    systemPrompt: p.systemPrompt,
    knowledgeBases: p.knowledgeBases.map((m) => ({ knowledgeBase: m.knowledgeBase, topK: m.topK, priority: m.priority })),
    ...(p.retrieval ? { retrieval: retrievalFromProto(p.retrieval) } : {}),
    hideFileNames: p.hideFileNames,
    correctionsKnowledgeBaseId: p.correctionsKnowledgeBaseId,
  };
}

export function assistantFromProto(p: AssistantProto): Assistant {
  return {
    ...assistantSettingsFromProto(p),
    id: p.id,
    createdAt: p.createdAt ? timestampDate(p.createdAt) : new Date(0),
    updatedAt: p.updatedAt ? timestampDate(p.updatedAt) : new Date(0),
  };
}

/** The settings as protobuf JSON, as a store's configuration and an archive keep them. */
export function assistantSettingsToJson(settings: AssistantSettings): JsonObject {
  // Settings only: an Assistant passed here keeps its id and times out of the JSON.
  return toJson(AssistantSchema, assistantToProto({ ...settings, id: undefined, createdAt: undefined, updatedAt: undefined })) as JsonObject;
}

/** Reads what assistantSettingsToJson wrote, newer fields this index does not know left out. */
export function assistantSettingsFromJson(json: JsonObject): AssistantSettings {
  return assistantSettingsFromProto(fromJson(AssistantSchema, json as never, { ignoreUnknownFields: true }));
}

function retrievalToProto(r: AssistantRetrieval): AssistantRetrievalProto {
  return create(AssistantRetrievalSchema, {
    mode: MODES.find(([, d]) => d === r.mode)?.[0] ?? RetrievalModeProto.UNSPECIFIED,
    topK: r.topK,
    minScore: r.minScore,
    rerank: r.rerank,
    rewrite: REWRITES.find(([, d]) => d === r.rewrite)?.[0] ?? QueryRewriteModeProto.UNSPECIFIED,
    ...fusionToProto(r.fusion),
  });
}

function retrievalFromProto(p: AssistantRetrievalProto): AssistantRetrieval {
  const mode = MODES.find(([m]) => m === p.mode)?.[1];
  const rewrite = REWRITES.find(([m]) => m === p.rewrite)?.[1];
  return {
    ...(mode ? { mode } : {}),
    topK: p.topK,
    minScore: p.minScore,
    rerank: p.rerank,
    ...(rewrite ? { rewrite } : {}),
    ...(p.fusion ? { fusion: fusionFromProto(p.fusion, p.convexAlpha) } : {}),
  };
}
