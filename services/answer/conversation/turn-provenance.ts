// A turn's record (turn-record.ts) and retrieval lists as the TurnProvenance message the index
// stores and GetTurn returns: ids, ranks, scores and timings, never document text.
import { create } from "@bufbuild/protobuf";
import { EvidenceSupportSchema, TurnProvenanceSchema, type EvidenceSupport, type QueryRewrite, type TurnProvenance } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import type { QueryRewriteMode } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { chunkParentToProto, explainToProto, modeToProto } from "../../../lib/proto-convert.ts";
import type { CandidateList } from "../retrieval/mounted-retrieval.ts";
import type { RetrievalExtras } from "../retrieval/retrieval-extras.ts";
import { rewriteModeOf } from "../retrieval/query-rewrite-mode.ts";
import type { RetrievalSettings } from "../retrieval/retrieval-stage.ts";
import type { EvidenceRecord, TurnRecord } from "../answering/turn-record.ts";

export interface ProvenanceInput {
  assistantId: string;
  knowledgeBaseIds: string[];
  retrievalQuery: string;
  rewrite: QueryRewrite;
  rewriteNote: string;
  historyTurns: number;
  settings: RetrievalSettings;
  /** The retrieval options the turn ran with (the request's over the assistant's), kept so DebugRetrieval can rerun them. */
  options?: RetrievalExtras;
  rewriteMode: QueryRewriteMode;
  rerank: boolean;
  hideFileNames: boolean;
  fusionRule: string;
  /** The assistant's corrections base, when it was searched. */
  correctionsBaseId?: string;
  lists: CandidateList[];
  /** Chunk id → its rank in its own list. */
  listRank: Map<string, number>;
  /** Absent when the turn failed before its answer was complete. */
  record?: TurnRecord;
  durationMs: number;
  error?: unknown;
  /** The Chat call's trace; "" when tracing is off. */
  traceId: string;
}

export function turnProvenance(input: ProvenanceInput): TurnProvenance {
  const { record, settings } = input;
  // Only matching corrections reach the fused list (mounted-retrieval.ts).
  const isCorrection = (knowledgeBaseId: string) => Boolean(input.correctionsBaseId) && knowledgeBaseId === input.correctionsBaseId;
  const baseOf = new Map<string, string>();
  for (const list of input.lists) for (const hit of list.hits) baseOf.set(hit.chunk.id, hit.chunk.knowledgeBaseId);
  return create(TurnProvenanceSchema, {
    assistantId: input.assistantId,
    knowledgeBaseIds: input.knowledgeBaseIds,
    retrievalQuery: input.retrievalQuery,
    rewrite: input.rewrite,
    rewriteNote: input.rewriteNote,
    historyTurns: input.historyTurns,
    traceId: input.traceId,
    retrieval: {
      mode: modeToProto(settings.mode),
      topK: settings.topK,
      minScore: settings.minScore,
      documentIds: settings.documentIds,
      metadataEquals: settings.metadataEquals ?? {},
      rerank: input.options?.rerank ?? false,
      queryRewrite: rewriteModeOf(input.options?.queryExpansion),
      queryVariants: input.options?.queryVariants ?? 0,
      neighbourChunks: input.options?.neighbourChunks ?? 0,
      bm25Fill: input.options?.bm25Fill ?? false,
    },
    rewriteMode: input.rewriteMode,
    rerank: input.rerank,
    hideFileNames: input.hideFileNames,
    lists: input.lists.map((list) => ({
      knowledgeBaseId: list.knowledgeBaseId,
      priority: list.priority,
      topK: list.topK,
      knownTokenShare: list.knownTokenShare,
      vectorWeight: list.vectorWeight,
      corrections: list.corrections !== undefined,
      hits: list.hits.map((hit, i) => ({
        correctionMatch: list.corrections?.get(hit.chunk.id),
        rank: i + 1,
        chunkId: hit.chunk.id,
        documentId: hit.chunk.documentId,
        fileName: hit.fileName,
        score: hit.score,
        // A convex hit's shares too, not only its ranks: the turn shows the fusion its assistant chose.
        explain: explainToProto(hit.explain),
      })),
    })),
    fusionRule: input.fusionRule,
    fused: (record?.hits ?? []).map((h) => ({
      rank: h.rank,
      chunkId: h.chunkId,
      knowledgeBaseId: h.knowledgeBaseId,
      listRank: input.listRank.get(h.chunkId) ?? 0,
      score: h.score,
      contextNumber: h.contextNumber,
      excludedReason: h.excludedReason ?? "",
      duplicateOf: h.duplicateOf ?? 0,
      correction: isCorrection(h.knowledgeBaseId),
    })),
    context: (record?.context ?? []).map((c) => ({
      number: c.number,
      chunkId: c.chunkId,
      documentId: c.documentId,
      knowledgeBaseId: baseOf.get(c.chunkId) ?? "",
      fileName: c.fileName,
      page: c.page,
      sectionPath: c.sectionPath,
      tokens: c.tokens,
      ...(c.parent ? { parent: chunkParentToProto(c.parent), matchedChunkIds: c.matchedChunkIds ?? [] } : {}),
    })),
    contextTokens: record?.contextTokens ?? 0,
    model: record?.model ?? "",
    extractive: record?.extractive ?? false,
    usage: record?.usage ? { promptTokens: record.usage.promptTokens, completionTokens: record.usage.completionTokens } : undefined,
    citationChecks: record?.citationChecks ?? [],
    markersUsed: record?.markers.used ?? [],
    markersDropped: record?.markers.dropped ?? [],
    resolvedMarkers: record?.markers.resolved ?? 0,
    unsupportedMarkers: record?.markers.unsupported ?? 0,
    stages: (record?.stages ?? []).map((s) => ({ stage: s.stage, startedAtMs: s.startedAtMs, durationMs: s.durationMs, note: s.note })),
    durationMs: input.durationMs,
    ...(record?.evidence ? { answered: record.evidence.answered, answeredReason: record.evidence.reason, evidence: evidenceToProto(record.evidence) } : {}),
    correctionsUsed: [...new Set((record?.hits ?? []).filter((h) => isCorrection(h.knowledgeBaseId) && h.contextNumber > 0).map((h) => h.documentId))],
    error: input.error === undefined ? "" : `${(input.error as Error).name ?? "Error"}: ${(input.error as Error).message ?? String(input.error)}`,
  });
}

/** The evidence judgement as ChatFinal and TurnProvenance carry it. */
export function evidenceToProto(e: EvidenceRecord): EvidenceSupport {
  return create(EvidenceSupportSchema, { coverage: e.coverage, threshold: e.threshold, missingTerms: e.missingTerms, bestChunkId: e.bestChunkId, questionTerms: e.questionTerms });
}
