// A citation as the plain-JSON surfaces show it (the OpenAI extension, MCP's `ask`): where the [n]
// points, and whether the verifier found the claims that marker closes supported by its chunk.
import type { ChatFinal } from "../gen/quarry/answer/v1/answer_pb.ts";
import type { Citation } from "../gen/quarry/common/v1/common_pb.ts";

export interface CitedSource {
  marker: number;
  chunk_id: string;
  document_id: string;
  file_name: string;
  /** 0 when the source has no pages. */
  page: number;
  page_end: number;
  section_path: string[];
  snippet: string;
  score: number;
  /** Every check of this marker found its claim supported; null when no check names the marker. */
  supported: boolean | null;
}

export function citedSource(c: Citation, final: Pick<ChatFinal, "citationChecks"> | undefined): CitedSource {
  const checks = (final?.citationChecks ?? []).filter((check) => check.marker === c.marker);
  return {
    marker: c.marker,
    chunk_id: c.chunkId,
    document_id: c.documentId,
    file_name: c.fileName,
    page: c.page,
    page_end: c.pageEnd,
    section_path: [...c.sectionPath],
    snippet: c.snippet,
    score: c.score,
    supported: checks.length ? checks.every((check) => check.supported) : null,
  };
}
