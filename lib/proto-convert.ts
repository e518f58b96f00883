// Translation between the protobuf messages in gen/ and the domain types in lib/domain.ts, shared by
// every service's routes and workers so each mapping is written once.
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  ChunkingStrategy,
  ChunkParentSchema,
  ChunkSchema,
  ParentMode,
  DocumentVectorMode,
  DocumentSchema,
  FusionMethod,
  KnowledgeBaseSchema,
  ModelChangeSchema,
  ModelChangeState as ModelChangeStateProto,
  ParsedDocumentSchema,
  RetrievalMode,
  SearchHitSchema,
  VectorScoreBandsSchema,
  type Chunk as ChunkProto,
  type ChunkParent as ChunkParentProto,
  type ChunkingSettings as ChunkingSettingsProto,
  type Document as DocumentProto,
  type KnowledgeBase as KnowledgeBaseProto,
  type ModelChange as ModelChangeProto,
  type ParsedDocument as ParsedDocumentProto,
  type SearchHit as SearchHitProto,
  type VectorScoreBands as VectorScoreBandsProto,
} from "../gen/quarry/common/v1/common_pb.ts";
import { SearchRequestSchema, type RegisterDocumentRequest, type SearchRequest as SearchRequestProto } from "../gen/quarry/index/v1/index_pb.ts";
import type {
  Chunk,
  ChunkParent,
  ChunkingSettings,
  ParentMode as DomainParentMode,
  DocumentVectorMode as DomainDocumentVectorMode,
  DocumentRecord,
  FusionRule,
  KnowledgeBase,
  ModelChange,
  ModelChangeState,
  NewDocumentVersion,
  ParsedDocument,
  RetrievalMode as DomainMode,
  SearchHit,
  SearchQuery,
} from "./domain.ts";
import { toDomainStatus, toProtoStatus } from "./pipeline/progress.ts";
import { findModel } from "./models/model-catalog.ts";

export function chunkingToProto(s: ChunkingSettings): ChunkingSettingsProto {
  return {
    $typeName: "quarry.common.v1.ChunkingSettings",
    strategy: ChunkingStrategy.RECURSIVE,
    chunkSize: s.chunkSize,
    chunkOverlap: s.chunkOverlap,
    separators: [...s.separators],
    parent: PARENT_TO_PROTO[s.parent ?? "none"],
    parentMaxTokens: s.parentMaxTokens ?? 0,
    documentVector: DOCUMENT_VECTOR_TO_PROTO[s.documentVector ?? "off"],
  };
}

const DOCUMENT_VECTOR_TO_PROTO: Record<DomainDocumentVectorMode, DocumentVectorMode> = {
  off: DocumentVectorMode.OFF,
  auto: DocumentVectorMode.AUTO,
};

export function documentVectorModeFromProto(p: DocumentVectorMode): DomainDocumentVectorMode | undefined {
  return Object.entries(DOCUMENT_VECTOR_TO_PROTO).find(([, v]) => v === p)?.[0] as DomainDocumentVectorMode | undefined;
}

const PARENT_TO_PROTO: Record<DomainParentMode, ParentMode> = {
  none: ParentMode.NONE,
  section: ParentMode.SECTION,
  document: ParentMode.DOCUMENT,
};

export function parentModeFromProto(p: ParentMode): DomainParentMode | undefined {
  return p === ParentMode.UNSPECIFIED ? undefined : (Object.entries(PARENT_TO_PROTO).find(([, v]) => v === p)?.[0] as DomainParentMode | undefined);
}

/** Unset fields (zero values) stay undefined so the chunker's defaults can fill them. */
export function chunkingFromProto(p: ChunkingSettingsProto | undefined): Partial<ChunkingSettings> {
  if (!p) return {};
  return {
    ...(p.strategy !== ChunkingStrategy.UNSPECIFIED ? { strategy: "recursive" as const } : {}),
    ...(p.chunkSize ? { chunkSize: p.chunkSize } : {}),
    ...(p.chunkOverlap || p.chunkSize ? { chunkOverlap: p.chunkOverlap } : {}),
    ...(p.separators.length ? { separators: [...p.separators] } : {}),
    ...(p.parent !== ParentMode.UNSPECIFIED ? { parent: parentModeFromProto(p.parent) ?? (String(p.parent) as DomainParentMode) } : {}),
    ...(p.parentMaxTokens ? { parentMaxTokens: p.parentMaxTokens } : {}),
    ...(p.documentVector !== DocumentVectorMode.UNSPECIFIED
      ? { documentVector: documentVectorModeFromProto(p.documentVector) ?? (String(p.documentVector) as DomainDocumentVectorMode) }
      : {}),
  };
}

export function knowledgeBaseToProto(kb: KnowledgeBase): KnowledgeBaseProto {
  return create(KnowledgeBaseSchema, {
    id: kb.id,
    name: kb.name,
    description: kb.description,
    embeddingModel: kb.embeddingModel,
    embeddingDimension: kb.embeddingDimension,
    chunking: chunkingToProto(kb.chunking),
    documentCount: BigInt(kb.documentCount),
    chunkCount: BigInt(kb.chunkCount),
    tokenCount: BigInt(kb.tokenCount),
    createdAt: timestampFromDate(kb.createdAt),
    updatedAt: timestampFromDate(kb.updatedAt),
    modelChange: kb.modelChange && modelChangeToProto(kb.modelChange),
    vectorScoreBands: vectorScoreBands(kb.embeddingModel),
  });
}

/** The score bands of a catalog model with a recorded distribution; undefined for any other. */
export function vectorScoreBands(model: string): VectorScoreBandsProto | undefined {
  const scores = findModel(model)?.scores;
  return (
    scores &&
    create(VectorScoreBandsSchema, {
      relevantMedian: scores.relevant.p50,
      relevantP25: scores.relevant.p25,
      bestIrrelevantMedian: scores.bestIrrelevant.p50,
      measuredOn: scores.measuredOn.map((m) => m.set),
    })
  );
}

const MODEL_CHANGE_STATES: Record<ModelChangeState, ModelChangeStateProto> = {
  running: ModelChangeStateProto.RUNNING,
  done: ModelChangeStateProto.DONE,
  failed: ModelChangeStateProto.FAILED,
};

export function modelChangeToProto(change: ModelChange): ModelChangeProto {
  return create(ModelChangeSchema, {
    targetModel: change.targetModel,
    targetDimension: change.targetDimension,
    previousModel: change.previousModel,
    state: MODEL_CHANGE_STATES[change.state],
    documentsDone: change.documentsDone,
    documentsTotal: change.documentsTotal,
    error: change.error,
    startedAt: timestampFromDate(change.startedAt),
    updatedAt: timestampFromDate(change.updatedAt),
  });
}

export function modelChangeFromProto(p: ModelChangeProto): ModelChange {
  const state = (Object.keys(MODEL_CHANGE_STATES) as ModelChangeState[]).find((name) => MODEL_CHANGE_STATES[name] === p.state) ?? "failed";
  return {
    targetModel: p.targetModel,
    targetDimension: p.targetDimension,
    previousModel: p.previousModel,
    state,
    documentsDone: p.documentsDone,
    documentsTotal: p.documentsTotal,
    error: p.error,
    startedAt: p.startedAt ? timestampDate(p.startedAt) : new Date(0),
    updatedAt: p.updatedAt ? timestampDate(p.updatedAt) : new Date(0),
  };
}

export function knowledgeBaseFromProto(p: KnowledgeBaseProto): KnowledgeBase {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    embeddingModel: p.embeddingModel,
    embeddingDimension: p.embeddingDimension,
    chunking: {
      strategy: "recursive",
      chunkSize: p.chunking?.chunkSize ?? 0,
      chunkOverlap: p.chunking?.chunkOverlap ?? 0,
      separators: [...(p.chunking?.separators ?? [])],
      ...(p.chunking ? chunkingFromProto(p.chunking) : {}),
    },
    documentCount: Number(p.documentCount),
    chunkCount: Number(p.chunkCount),
    tokenCount: Number(p.tokenCount),
    createdAt: p.createdAt ? timestampDate(p.createdAt) : new Date(0),
    updatedAt: p.updatedAt ? timestampDate(p.updatedAt) : new Date(0),
    ...(p.modelChange ? { modelChange: modelChangeFromProto(p.modelChange) } : {}),
  };
}

export function documentToProto(d: DocumentRecord): DocumentProto {
  return create(DocumentSchema, {
    id: d.id,
    knowledgeBaseId: d.knowledgeBaseId,
    fileName: d.fileName,
    mimeType: d.mimeType,
    sizeBytes: BigInt(d.sizeBytes),
    contentHash: d.contentHash,
    version: BigInt(d.version),
    status: toProtoStatus(d.status),
    progressPercent: d.progressPercent,
    chunkCount: d.chunkCount,
    tokenCount: d.tokenCount,
    errorMessage: d.errorMessage,
    enabled: d.enabled,
    metadata: { ...d.metadata },
    createdAt: timestampFromDate(d.createdAt),
    updatedAt: timestampFromDate(d.updatedAt),
    chunkEdits: d.chunkEdits ?? "",
    traceId: d.traceId ?? "",
  });
}

export function documentFromProto(p: DocumentProto): DocumentRecord {
  return {
    id: p.id,
    ...documentVersionFromProto(p),
    status: toDomainStatus(p.status),
    progressPercent: p.progressPercent,
    chunkCount: p.chunkCount,
    tokenCount: p.tokenCount,
    errorMessage: p.errorMessage,
    enabled: p.enabled,
    createdAt: p.createdAt ? timestampDate(p.createdAt) : new Date(0),
    updatedAt: p.updatedAt ? timestampDate(p.updatedAt) : new Date(0),
    ...(p.chunkEdits ? { chunkEdits: p.chunkEdits } : {}),
    ...(p.traceId ? { traceId: p.traceId } : {}),
  };
}

/**
 * A new document version as the index's RegisterDocumentRequest carries it; the events'
 * DocumentDescriptor carries the same fields, so one translation serves the RPC and the status keeper.
 */
export type DocumentVersionProto = Pick<RegisterDocumentRequest, Exclude<keyof NewDocumentVersion, "reingest" | "traceId">> & { reingest?: boolean };

export function documentVersionFromProto(p: DocumentVersionProto): NewDocumentVersion {
  return {
    knowledgeBaseId: p.knowledgeBaseId,
    fileName: p.fileName,
    mimeType: p.mimeType,
    sizeBytes: Number(p.sizeBytes),
    contentHash: p.contentHash,
    version: Number(p.version),
    metadata: { ...p.metadata },
    ...(p.reingest ? { reingest: true } : {}),
  };
}

export function parsedToProto(d: ParsedDocument): ParsedDocumentProto {
  return create(ParsedDocumentSchema, {
    text: d.text,
    mimeType: d.mimeType,
    parser: d.parser,
    pages: d.pages.map((p) => ({ number: p.number, startOffset: p.start, endOffset: p.end })),
    sections: d.sections.map((s) => ({ path: [...s.path], level: s.level, startOffset: s.start, endOffset: s.end })),
    metadata: { ...d.metadata },
  });
}

export function parsedFromProto(p: ParsedDocumentProto): ParsedDocument {
  return {
    text: p.text,
    mimeType: p.mimeType,
    parser: p.parser,
    pages: p.pages.map((x) => ({ number: x.number, start: x.startOffset, end: x.endOffset })),
    sections: p.sections.map((x) => ({ path: [...x.path], level: x.level, start: x.startOffset, end: x.endOffset })),
    metadata: { ...p.metadata },
  };
}

export function chunkToProto(c: Chunk): ChunkProto {
  return create(ChunkSchema, {
    id: c.id,
    documentId: c.documentId,
    knowledgeBaseId: c.knowledgeBaseId,
    index: c.index,
    text: c.text,
    tokenCount: c.tokenCount,
    page: c.page,
    pageEnd: c.pageEnd,
    sectionPath: [...c.sectionPath],
    startOffset: c.start,
    endOffset: c.end,
    ...(c.parent ? { parent: chunkParentToProto(c.parent) } : {}),
    version: c.revision?.version ?? 1,
    edited: (c.revision?.version ?? 1) > 1,
    manual: c.revision?.manual ?? false,
    originalText: c.revision?.originalText ?? "",
    disabled: c.disabled ?? false,
  });
}

export function chunkParentToProto(p: ChunkParent): ChunkParentProto {
  return create(ChunkParentSchema, {
    index: p.index,
    startOffset: p.start,
    endOffset: p.end,
    tokenCount: p.tokenCount,
    sectionPath: [...p.sectionPath],
    firstChunkIndex: p.firstChunkIndex,
    chunkCount: p.chunkCount,
  });
}

export function chunkParentFromProto(p: ChunkParentProto): ChunkParent {
  return {
    index: p.index,
    start: p.startOffset,
    end: p.endOffset,
    tokenCount: p.tokenCount,
    sectionPath: [...p.sectionPath],
    firstChunkIndex: p.firstChunkIndex,
    chunkCount: p.chunkCount,
  };
}

export function chunkFromProto(p: ChunkProto): Chunk {
  return {
    id: p.id,
    documentId: p.documentId,
    knowledgeBaseId: p.knowledgeBaseId,
    index: p.index,
    text: p.text,
    tokenCount: p.tokenCount,
    page: p.page,
    pageEnd: p.pageEnd,
    sectionPath: [...p.sectionPath],
    start: p.startOffset,
    end: p.endOffset,
    ...(p.parent ? { parent: chunkParentFromProto(p.parent) } : {}),
    ...(p.version > 1 || p.manual ? { revision: { version: p.version, manual: p.manual, originalText: p.originalText } } : {}),
    ...(p.disabled ? { disabled: true } : {}),
  };
}

export function hitToProto(h: SearchHit): SearchHitProto {
  return create(SearchHitSchema, { chunk: chunkToProto(h.chunk), fileName: h.fileName, score: h.score, explain: explainToProto(h.explain) });
}

/** A hit's explain as the message has it: convex fusion's shares as fields of their own. */
export function explainToProto(e: SearchHit["explain"]) {
  const { convex, ...explain } = e;
  return { ...explain, ...(convex ? { bm25Normalized: convex.bm25Normalised, vectorNormalized: convex.vectorNormalised, vectorWeight: convex.vectorWeight } : {}) };
}

/** The fusion a request asks for; UNSPECIFIED is reciprocal rank fusion, as an unset field always was. */
export function fusionFromProto(method: FusionMethod, convexAlpha: number | undefined): FusionRule {
  return method === FusionMethod.CONVEX ? { method: "convex", ...(convexAlpha !== undefined ? { alpha: convexAlpha } : {}) } : { method: "rrf" };
}

export function fusionToProto(rule: FusionRule | undefined): { fusion: FusionMethod; convexAlpha?: number } {
  if (rule?.method !== "convex") return { fusion: rule ? FusionMethod.RRF : FusionMethod.UNSPECIFIED };
  return { fusion: FusionMethod.CONVEX, ...(rule.alpha !== undefined ? { convexAlpha: rule.alpha } : {}) };
}

export function hitFromProto(p: SearchHitProto): SearchHit {
  return {
    chunk: chunkFromProto(p.chunk!),
    fileName: p.fileName,
    score: p.score,
    explain: {
      bm25Rank: p.explain?.bm25Rank ?? 0,
      bm25Score: p.explain?.bm25Score ?? 0,
      vectorRank: p.explain?.vectorRank ?? 0,
      vectorScore: p.explain?.vectorScore ?? 0,
      fusedScore: p.explain?.fusedScore ?? 0,
      ...(p.explain?.fallback ? { fallback: true } : {}),
      ...(p.explain?.rerankScore !== undefined ? { rerankScore: p.explain.rerankScore } : {}),
      ...(p.explain?.mergedChunkIds.length ? { mergedChunkIds: [...p.explain.mergedChunkIds] } : {}),
      ...(p.explain?.documentRank ? { documentRank: p.explain.documentRank, documentScore: p.explain.documentScore } : {}),
      ...(p.explain?.vectorWeight !== undefined
        ? { convex: { bm25Normalised: p.explain.bm25Normalized ?? 0, vectorNormalised: p.explain.vectorNormalized ?? 0, vectorWeight: p.explain.vectorWeight } }
        : {}),
    },
  };
}

const modes: [RetrievalMode, DomainMode][] = [
  [RetrievalMode.HYBRID, "hybrid"],
  [RetrievalMode.BM25, "bm25"],
  [RetrievalMode.VECTOR, "vector"],
];

export function modeFromProto(m: RetrievalMode): DomainMode {
  return modes.find(([p]) => p === m)?.[1] ?? "hybrid";
}

export function modeToProto(m: DomainMode): RetrievalMode {
  return modes.find(([, d]) => d === m)?.[0] ?? RetrievalMode.HYBRID;
}

/** A search as the index's Search RPC carries it: proto's zero values stand for "unset". */
export function searchToProto(q: SearchQuery): SearchRequestProto {
  return create(SearchRequestSchema, {
    knowledgeBaseIds: q.knowledgeBaseIds,
    text: q.text,
    vector: q.vector ? Array.from(q.vector) : [],
    mode: modeToProto(q.mode),
    topK: q.topK,
    minScore: q.minScore,
    documentIds: q.documentIds,
    candidates: q.candidates ?? 0,
    rrfK: q.rrfK ?? 0,
    weights: q.weights,
    metadataEquals: q.metadataEquals ?? {},
    ...fusionToProto(q.fusion),
  });
}

/** Proto's zero values mean "unset": no vector, the default top k, candidates and RRF constant. */
export function searchFromProto(p: SearchRequestProto): Omit<SearchQuery, "topK"> & Partial<Pick<SearchQuery, "topK">> {
  return {
    knowledgeBaseIds: [...p.knowledgeBaseIds],
    text: p.text,
    vector: p.vector.length ? Float32Array.from(p.vector) : undefined,
    mode: modeFromProto(p.mode),
    topK: p.topK || undefined,
    minScore: p.minScore,
    documentIds: [...p.documentIds],
    candidates: p.candidates || undefined,
    rrfK: p.rrfK || undefined,
    weights: p.weights ? { bm25: p.weights.bm25, vector: p.weights.vector } : undefined,
    ...(Object.keys(p.metadataEquals).length > 0 ? { metadataEquals: { ...p.metadataEquals } } : {}),
    ...(p.fusion === FusionMethod.CONVEX ? { fusion: fusionFromProto(p.fusion, p.convexAlpha) } : {}),
  };
}
