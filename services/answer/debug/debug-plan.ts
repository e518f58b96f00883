// What a DebugRetrieval reruns: a stored turn's retrieval as its provenance recorded it (its
// retrieval query — the rewrite when there was one —, its bases with their top-k and priority, its
// settings), or an ad-hoc query over bases or an assistant; the request's overrides on top.
import type { Turn } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import type { Assistant } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import type { RetrievalMode } from "../../../lib/domain.ts";
import { InvalidInputError } from "../../../lib/errors.ts";
import { modeFromProto } from "../../../lib/proto-convert.ts";
import { expansionOf, queryRewriteOf } from "../retrieval/query-rewrite-mode.ts";
import type { RetrievalExtras } from "../retrieval/retrieval-extras.ts";

/** What the person expected retrieval to find; at least one field is set. */
export interface Expectation {
  text: string;
  chunkId: string;
  documentId: string;
}

/** Settings a request sets; 0, false, empty and undefined leave the turn's or the assistant's. */
export interface DebugOverrides extends RetrievalExtras {
  mode?: RetrievalMode;
  topK: number;
  minScore: number;
  documentIds: string[];
  metadataEquals?: Record<string, string>;
}

export interface DebugRequest {
  turnId: string;
  query: string;
  /** Ids or names. */
  knowledgeBases: string[];
  /** An id or a name. */
  assistant: string;
  overrides: DebugOverrides;
  expect: Expectation;
  /** 0: DEFAULT_DEEP_WINDOW. */
  deepWindow: number;
}

export interface DebugPlan {
  turn?: Turn;
  query: string;
  assistantId: string;
  /** The bases to search (ids or names), in mount order for an assistant. */
  names: string[];
  /** With an assistant (aligned with names): each base searched on its own. */
  mounts?: { topK: number; priority: number }[];
  mode: RetrievalMode;
  topK: number;
  minScore: number;
  documentIds: string[];
  metadataEquals?: Record<string, string>;
  extras: RetrievalExtras;
  deepWindow: number;
}

export interface PlanSources {
  getTurn(id: string): Promise<Turn>;
  getAssistant(idOrName: string): Promise<Assistant>;
}

/** How deep a list is searched for a chunk the retrieval did not fetch, unless the request says. */
export const DEFAULT_DEEP_WINDOW = 500;
/** The index's most hits per search. */
export const MAX_DEEP_WINDOW = 1000;
const DEFAULT_TOP_K = 8;

/** Checks the request's shape before anything is looked up. */
export function validateDebugRequest(request: DebugRequest): void {
  const adHoc = request.query.trim() || request.knowledgeBases.some((k) => k.trim()) || request.assistant.trim();
  if (request.turnId.trim() && adHoc) throw new InvalidInputError("name a turn, or a query with its knowledge bases or assistant, not both");
  if (!request.turnId.trim()) {
    if (!request.query.trim()) throw new InvalidInputError("name a turn to rerun, or give a query");
    const named = request.knowledgeBases.filter((k) => k.trim());
    if (named.length === 0 && !request.assistant.trim()) throw new InvalidInputError("choose at least one knowledge base, or an assistant");
    if (named.length > 0 && request.assistant.trim()) throw new InvalidInputError("ask an assistant or name knowledge bases, not both");
  }
  const { text, chunkId, documentId } = request.expect;
  if (!text.trim() && !chunkId.trim() && !documentId.trim()) {
    throw new InvalidInputError("say what retrieval should have found: an expected text, a chunk id or a document id");
  }
  if (!Number.isInteger(request.deepWindow) || request.deepWindow < 0 || request.deepWindow > MAX_DEEP_WINDOW) {
    throw new InvalidInputError(`deep_window is at most ${MAX_DEEP_WINDOW}, got ${request.deepWindow}`);
  }
}

export async function planDebug(request: DebugRequest, sources: PlanSources): Promise<DebugPlan> {
  validateDebugRequest(request);
  const deepWindow = request.deepWindow || DEFAULT_DEEP_WINDOW;
  const plan = request.turnId.trim() ? await planFromTurn(request.turnId.trim(), sources) : await planAdHoc(request, sources);
  return applyOverrides({ ...plan, deepWindow }, request.overrides);
}

async function planFromTurn(turnId: string, sources: PlanSources): Promise<DebugPlan> {
  const turn = await sources.getTurn(turnId);
  const p = turn.provenance;
  if (!p) throw new InvalidInputError(`turn ${turnId} has no provenance to rerun`);
  const r = p.retrieval;
  const lists = p.lists.filter((l) => l.knowledgeBaseId);
  // An assistant's bases were each searched on their own, and their lists record their top-k and
  // priority as the turn used them (the assistant may have changed since).
  let names = [...p.knowledgeBaseIds];
  let mounts: DebugPlan["mounts"];
  if (p.assistantId && lists.length > 0) {
    names = lists.map((l) => l.knowledgeBaseId);
    mounts = lists.map((l) => ({ topK: l.topK, priority: l.priority }));
  } else if (p.assistantId) {
    const assistant = await sources.getAssistant(p.assistantId);
    names = assistant.knowledgeBases.map((m) => m.knowledgeBase);
    mounts = assistant.knowledgeBases.map((m) => ({ topK: m.topK, priority: m.priority }));
  }
  if (names.length === 0) throw new InvalidInputError(`turn ${turnId} records no knowledge base to search`);
  return {
    turn,
    query: p.retrievalQuery || turn.question,
    assistantId: p.assistantId,
    names,
    mounts,
    mode: r?.mode ? modeFromProto(r.mode) : "hybrid",
    topK: r?.topK || DEFAULT_TOP_K,
    minScore: r?.minScore ?? 0,
    documentIds: [...(r?.documentIds ?? [])],
    metadataEquals: nonEmpty(r?.metadataEquals),
    extras: {
      rerank: (r?.rerank ?? false) || p.rerank,
      // A turn stored before query_rewrite replaced query_expansion keeps the old field.
      queryExpansion: expansionOf(queryRewriteOf(r)) ?? expansionOf(p.rewriteMode),
      queryVariants: r?.queryVariants ?? 0,
      neighbourChunks: r?.neighbourChunks ?? 0,
      bm25Fill: r?.bm25Fill ?? false,
    },
    deepWindow: DEFAULT_DEEP_WINDOW,
  };
}

async function planAdHoc(request: DebugRequest, sources: PlanSources): Promise<DebugPlan> {
  const base = { query: request.query.trim(), minScore: 0, documentIds: [], deepWindow: DEFAULT_DEEP_WINDOW };
  if (request.assistant.trim()) {
    const assistant = await sources.getAssistant(request.assistant.trim());
    if (assistant.knowledgeBases.length === 0) throw new InvalidInputError(`the assistant ${assistant.name} mounts no knowledge base`);
    const d = assistant.retrieval;
    return {
      ...base,
      assistantId: assistant.id,
      names: assistant.knowledgeBases.map((m) => m.knowledgeBase),
      mounts: assistant.knowledgeBases.map((m) => ({ topK: m.topK, priority: m.priority })),
      mode: d?.mode ? modeFromProto(d.mode) : "hybrid",
      topK: d?.topK || DEFAULT_TOP_K,
      minScore: d?.minScore ?? 0,
      extras: { rerank: d?.rerank ?? false, queryExpansion: expansionOf(d?.rewrite) },
    };
  }
  return { ...base, assistantId: "", names: request.knowledgeBases.map((k) => k.trim()).filter(Boolean), mode: "hybrid", topK: DEFAULT_TOP_K, extras: {} };
}

function applyOverrides(plan: DebugPlan, o: DebugOverrides): DebugPlan {
  return {
    ...plan,
    mode: o.mode ?? plan.mode,
    topK: o.topK || plan.topK,
    minScore: o.minScore || plan.minScore,
    documentIds: o.documentIds.length > 0 ? [...o.documentIds] : plan.documentIds,
    metadataEquals: nonEmpty(o.metadataEquals) ?? plan.metadataEquals,
    extras: {
      rerank: o.rerank || plan.extras.rerank,
      queryExpansion: o.queryExpansion ?? plan.extras.queryExpansion,
      queryVariants: o.queryVariants || plan.extras.queryVariants,
      neighbourChunks: o.neighbourChunks || plan.extras.neighbourChunks,
      bm25Fill: o.bm25Fill || plan.extras.bm25Fill,
    },
  };
}

function nonEmpty(map: Record<string, string> | undefined): Record<string, string> | undefined {
  return map && Object.keys(map).length > 0 ? { ...map } : undefined;
}
