/** One source the answer cites: the chunk behind a [n] marker, located precisely enough to open it. */
export interface Citation {
  /** The n of the [n] marker in the answer text; the context chunk's number. */
  marker: number;
  chunkId: string;
  documentId: string;
  knowledgeBaseId: string;
  fileName: string;
  /** First page the chunk is on; 0 when the source has no pages. */
  page: number;
  /** Last page the chunk touches; 0 when the source has no pages. */
  pageEnd: number;
  sectionPath: string[];
  /** [start, end) offsets of the chunk in the parsed document's text. */
  start: number;
  end: number;
  /** The start of the chunk's text, for a preview. */
  snippet: string;
  /** The retrieval score the chunk had. */
  score: number;
}
