// What the MCP tools and resources return, as plain JSON for a model to read: the public API's
// messages with the fields a citation needs, named as the tools' arguments are (snake_case).
import type { Chunk, Document, KnowledgeBase, SearchHit } from "../../gen/quarry/common/v1/common_pb.ts";
import { DocumentStatus, RetrievalMode } from "../../gen/quarry/common/v1/common_pb.ts";

export const MODES = { hybrid: RetrievalMode.HYBRID, bm25: RetrievalMode.BM25, vector: RetrievalMode.VECTOR } as const;
export type ModeName = keyof typeof MODES;

export function knowledgeBaseResult(k: KnowledgeBase) {
  return {
    id: k.id,
    name: k.name,
    description: k.description,
    embedding_model: k.embeddingModel,
    document_count: Number(k.documentCount),
    chunk_count: Number(k.chunkCount),
  };
}

export function documentResult(d: Document) {
  return {
    id: d.id,
    file_name: d.fileName,
    status: DocumentStatus[d.status]?.toLowerCase() ?? "unknown",
    chunk_count: d.chunkCount,
    enabled: d.enabled,
    ...(d.errorMessage ? { error: d.errorMessage } : {}),
  };
}

export function chunkResult(c: Chunk) {
  return {
    chunk_id: c.id,
    document_id: c.documentId,
    knowledge_base_id: c.knowledgeBaseId,
    index: c.index,
    page: c.page,
    page_end: c.pageEnd,
    section_path: c.sectionPath,
    text: c.text,
  };
}

/** A hit is its chunk, where it came from (the citation) and why it ranks there. */
export function hitResult(hit: SearchHit, rank: number) {
  const e = hit.explain;
  return {
    rank,
    score: hit.score,
    file_name: hit.fileName,
    ...chunkResult(hit.chunk!),
    explain: {
      bm25_rank: e?.bm25Rank ?? 0,
      vector_rank: e?.vectorRank ?? 0,
      fused_score: e?.fusedScore ?? 0,
      ...(e?.rerankScore !== undefined ? { rerank_score: e.rerankScore } : {}),
      ...(e?.fallback ? { fallback: true } : {}),
    },
  };
}
