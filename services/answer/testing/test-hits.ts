// Builders of search hits for this folder's unit tests.
import type { SearchHit } from "../../../lib/domain.ts";
import type { ContextChunk } from "../answering/context-builder.ts";

export function makeHit(id: string, text: string, overrides: { fileName?: string; page?: number; sectionPath?: string[]; score?: number; documentId?: string } = {}): SearchHit {
  const score = overrides.score ?? 0.5;
  return {
    chunk: {
      id,
      documentId: overrides.documentId ?? `doc-${id}`,
      knowledgeBaseId: "kb-1",
      index: 0,
      text,
      tokenCount: text.split(/\s+/).length,
      page: overrides.page ?? 0,
      pageEnd: overrides.page ?? 0,
      sectionPath: overrides.sectionPath ?? [],
      start: 0,
      end: text.length,
    },
    fileName: overrides.fileName ?? `${id}.txt`,
    score,
    explain: { bm25Rank: 1, bm25Score: score, vectorRank: 0, vectorScore: 0, fusedScore: score },
  };
}

/** Context chunks numbered 1..n from texts, as buildContext would number them. */
export function makeContext(texts: string[]): ContextChunk[] {
  return texts.map((text, i) => ({ number: i + 1, hit: makeHit(`c${i + 1}`, text), tokens: text.length }));
}
