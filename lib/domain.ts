// Quarry's domain vocabulary, shared by every service's domain modules. Plain data only: no
// transport, no storage. The protobuf messages in gen/ mirror these; each service's routes.ts
// translates between the two.

/** A span of the parsed text, as [start, end) UTF-16 offsets into ParsedDocument.text. */
export interface TextSpan {
  start: number;
  end: number;
}

/** One page of a paginated source (PDF, slides); pages are numbered from 1. */
export interface PageSpan extends TextSpan {
  number: number;
}

/** A heading and the text it governs; path is the chain of headings from the top, e.g. ["Intro", "Scope"]. */
export interface SectionSpan extends TextSpan {
  path: string[];
  level: number;
}

export interface ParsedDocument {
  /** The readable text, normalised to "\n" line endings. Offsets everywhere point into this. */
  text: string;
  /** MIME type the parser detected (may differ from what the uploader claimed). */
  mimeType: string;
  /** Which parser produced the text, e.g. "builtin:pdf" or "tika". */
  parser: string;
  /** Empty for sources without pages. */
  pages: PageSpan[];
  /** Empty when the source shows no heading structure. */
  sections: SectionSpan[];
  /** Title, author, encoding and the like; never document text. */
  metadata: Record<string, string>;
}

export type ChunkingStrategy = "recursive";

export interface ChunkingSettings {
  strategy: ChunkingStrategy;
  /** Target chunk size in tokens of the embedding model's tokenizer. */
  chunkSize: number;
  /** Tokens repeated from the end of one chunk at the start of the next. */
  chunkOverlap: number;
  /** Separators tried in order; empty means the default ladder (paragraph → line → sentence → clause → space → character). */
  separators: string[];
  /**
   * Two-level chunking: chunks are the children search matches, their parent (the section, or the
   * whole document) is what an answer reads. Absent: "none" (bases made before it existed).
   */
  parent?: ParentMode;
  /** The most tokens one parent may hold; absent: DEFAULT_PARENT_MAX_TOKENS of the chunker. */
  parentMaxTokens?: number;
  /**
   * A vector of the whole document beside its chunk vectors, for documents the model reads at
   * least half of (lib/document-input.ts). Absent: "off" (bases made before it existed).
   */
  documentVector?: DocumentVectorMode;
}

export type ParentMode = "none" | "section" | "document";

export type DocumentVectorMode = "off" | "auto";

/** The span a child chunk belongs to; children never cross it. */
export interface ChunkParent {
  /** 0-based, in text order within the document. */
  index: number;
  start: number;
  end: number;
  tokenCount: number;
  sectionPath: string[];
  /**
   * The parent's children: chunks firstChunkIndex .. firstChunkIndex + chunkCount - 1 of the
   * document, what an answer reads the parent from. chunkCount 0: not known (chunked before it was
   * recorded), so the child is read alone.
   */
  firstChunkIndex: number;
  chunkCount: number;
}

/** A chunk as the chunker makes it: no ids yet beyond its position. */
export interface ChunkDraft {
  index: number;
  text: string;
  tokenCount: number;
  /** Page the chunk starts on, 0 when the source has no pages. */
  page: number;
  /** Last page the chunk touches, 0 when the source has no pages. */
  pageEnd: number;
  sectionPath: string[];
  start: number;
  end: number;
  /** Set with two-level chunking. */
  parent?: ChunkParent;
}

/**
 * A chunk corrected or written by hand (docs/DOCUMENTS.md). Its id stays the one it was ingested
 * (or added) with; version counts its texts.
 */
export interface ChunkRevision {
  /** 1 as ingested or added, one more per edit. */
  version: number;
  /** Added by hand, not cut from the file. */
  manual: boolean;
  /** For an edited chunk cut from the file: the text ingestion gave it; "" for a manual chunk. */
  originalText: string;
}

/** A chunk that belongs to a document, with its stable id. */
export interface Chunk extends ChunkDraft {
  id: string;
  documentId: string;
  knowledgeBaseId: string;
  /** Absent for a chunk as ingested and never edited. */
  revision?: ChunkRevision;
  /** Disabled by hand: stored, never returned by search. */
  disabled?: boolean;
}

export interface EmbeddedChunk extends Chunk {
  vector: Float32Array;
}

export interface EmbeddingModelInfo {
  /** The name stored with a knowledge base; vectors of different models never mix. */
  model: string;
  dimension: number;
  /** The most tokens the model reads from one input; it ignores the rest silently, so chunks must fit. */
  maxInputTokens: number;
}

export interface KnowledgeBase {
  id: string;
  name: string;
  description: string;
  embeddingModel: string;
  embeddingDimension: number;
  chunking: ChunkingSettings;
  documentCount: number;
  chunkCount: number;
  tokenCount: number;
  createdAt: Date;
  updatedAt: Date;
  /** The last (or running) change of embedding model; absent when there was none. */
  modelChange?: ModelChange;
}

export type ModelChangeState = "running" | "done" | "failed";

/** A knowledge base's change of embedding model: re-embedded beside the live vectors, switched when done. */
export interface ModelChange {
  targetModel: string;
  targetDimension: number;
  previousModel: string;
  state: ModelChangeState;
  documentsDone: number;
  documentsTotal: number;
  /** Why it failed, for a person to read; empty unless state is "failed". */
  error: string;
  startedAt: Date;
  updatedAt: Date;
  /**
   * Set once the change re-embeds the documents written meanwhile and swaps: writes on every index
   * replica wait until it is over (catalog/model-change-fence.ts). Not part of the API.
   */
  switching?: boolean;
  /** The lease owner (index replica) running the change. Not part of the API. */
  holder?: string;
}

export type DocumentStatus = "pending" | "parsing" | "chunking" | "embedding" | "indexing" | "ready" | "failed";

export interface DocumentRecord {
  id: string;
  knowledgeBaseId: string;
  fileName: string;
  mimeType: string;
  sizeBytes: number;
  contentHash: string;
  /** Submission time in ms since the epoch; a newer version supersedes an older one still in flight. */
  version: number;
  status: DocumentStatus;
  progressPercent: number;
  chunkCount: number;
  tokenCount: number;
  errorMessage: string;
  enabled: boolean;
  metadata: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
  /** What indexing this version did to hand-corrected chunks (kept, dropped); absent when there were none. */
  chunkEdits?: string;
  /** The trace of the call that submitted this version; absent when tracing was off. */
  traceId?: string;
}

/** What registering a new version of a document tells the catalog; the rest is the catalog's to fill in. */
export type NewDocumentVersion = Pick<DocumentRecord, "knowledgeBaseId" | "fileName" | "mimeType" | "sizeBytes" | "contentHash" | "version" | "metadata"> & {
  /** A re-ingest: a new version even when the content is the same as the current one's. */
  reingest?: boolean;
  /** The trace the registration runs in, which the whole ingestion of the version continues. */
  traceId?: string;
};

/**
 * A failure caused by a backend that was down (Tika, the embedding endpoint, a broker) is reported
 * as failed with this mark at the end of its reason: the document will be retried, so the failure
 * is not final and later progress of the same version moves it on.
 */
export const RETRYING_MARK = "(retrying)";

export function isRetryingFailure(error: string): boolean {
  return error.endsWith(RETRYING_MARK);
}

export type IngestionPhase = Exclude<DocumentStatus, "pending"> | "pending";

/** What every ingestion stage reports; the index keeps a document's status from these. */
export interface IngestionProgress {
  documentId: string;
  knowledgeBaseId: string;
  version: number;
  phase: DocumentStatus;
  percent: number;
  message: string;
  /** Set with phase "failed". */
  error: string;
  chunkCount: number;
  tokenCount: number;
  at: Date;
  /** With phase "ready", from the index itself: what it did to hand-corrected chunks. */
  chunkEdits?: string;
}

export type RetrievalMode = "hybrid" | "bm25" | "vector";

export interface SearchQuery {
  knowledgeBaseIds: string[];
  text: string;
  /** Needed for "vector" and "hybrid"; must match the knowledge bases' dimension. */
  vector?: Float32Array;
  mode: RetrievalMode;
  topK: number;
  /** Hits scoring below this (in the mode's own score) are dropped. 0 keeps all. */
  minScore: number;
  documentIds: string[];
  /** How many candidates each list contributes before fusion; defaults to max(topK * 4, 50). */
  candidates?: number;
  /** RRF constant, 60 unless configured. */
  rrfK?: number;
  /** Per-list weights for fusion, 1 and 1 unless configured. */
  weights?: { bm25: number; vector: number };
  /** How hybrid fuses its lists; reciprocal rank fusion unless asked. */
  fusion?: FusionRule;
  /** Only documents whose metadata has every one of these key/value pairs. */
  metadataEquals?: Record<string, string>;
}

/**
 * Hybrid fusion: reciprocal rank (ranks only, k = rrfK) or a convex combination of normalised scores,
 * alpha · vector + (1 − alpha) · bm25 (services/index/search/convex-fusion.ts).
 */
export type FusionRule = { method: "rrf" } | { method: "convex"; alpha?: number };

/** Why a hit ranks where it does: each list's rank and raw score (0 when absent from that list). */
export interface HitExplain {
  bm25Rank: number;
  bm25Score: number;
  vectorRank: number;
  vectorScore: number;
  fusedScore: number;
  /** A keyword hit that filled top-k, or answered alone because vector search was unavailable. */
  fallback?: boolean;
  /** The reranker's score, when the hit was reranked. */
  rerankScore?: number;
  /** Adjacent chunks merged into the hit's text by neighbour expansion, in document order. */
  mergedChunkIds?: string[];
  /** The hit's document's rank and whole-document cosine among the document vectors (explains vectorScore, adds no vote); absent when not among them. */
  documentRank?: number;
  documentScore?: number;
  /** Convex fusion only: each list's score on its 0–1 scale (0 when absent) and the vector list's weight alpha. */
  convex?: { bm25Normalised: number; vectorNormalised: number; vectorWeight: number };
}

export interface SearchHit {
  chunk: Chunk;
  fileName: string;
  score: number;
  explain: HitExplain;
}

// FindChunks: the chunks that hold a text (the retrieval debugger asks the index for them).

/** A chunk as an engine reads it for a find: enabled or not. */
export interface ScannedChunk {
  chunk: Chunk;
  fileName: string;
  enabled: boolean;
}

export interface FoundChunk extends ScannedChunk {
  /** The text is in the chunk as given (false: only once both are normalised). */
  exact: boolean;
}

export interface ChunkFind {
  chunks: FoundChunk[];
  /** Every match, past limit too. */
  matched: number;
  scanned: number;
  /** False when maxScan stopped the scan before every chunk was read. */
  complete: boolean;
}

// Assistants, conversations and turns: kept by the index, read by the answer service. The index's
// stores and registries work on these; each is mapped to and from its protobuf message once, in
// services/index/assistants/assistant-proto.ts and services/index/conversations/conversation-proto.ts.

/** A JSON object kept as given (a turn's body, an assistant's configuration in storage). */
export type JsonObject = { [key: string]: unknown };

/** A knowledge base an assistant searches; knowledgeBase is its id once the index resolved it. */
export interface KnowledgeBaseMount {
  knowledgeBase: string;
  /** Chunks this base contributes; 0: the assistant's default. */
  topK: number;
  /** Higher first when bases tie; 0 by default. */
  priority: number;
}

export type QueryRewriteMode = "none" | "rewrite" | "hyde" | "multi_query";

/** An assistant's retrieval defaults; a field left at its zero (or absent) means the answer service's default. */
export interface AssistantRetrieval {
  mode?: RetrievalMode;
  topK: number;
  minScore: number;
  rerank: boolean;
  rewrite?: QueryRewriteMode;
  /** How hybrid fuses its lists; unset: reciprocal rank fusion. A request's own fusion overrides it. */
  fusion?: FusionRule;
}

/** What a caller sets on an assistant: everything but its id and times. */
export interface AssistantSettings {
  name: string;
  description: string;
  systemPrompt: string;
  knowledgeBases: KnowledgeBaseMount[];
  retrieval?: AssistantRetrieval;
  hideFileNames: boolean;
  /** The base its corrections go to; set by Quarry (the first correction, an import), "" until then. */
  correctionsKnowledgeBaseId: string;
}

export interface Assistant extends AssistantSettings {
  id: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface Conversation {
  id: string;
  title: string;
  /** "" when the conversation named knowledge bases directly. */
  assistantId: string;
  knowledgeBaseIds: string[];
  turnCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A turn as the index keeps it: numbered in its conversation, its content (question, answer,
 * citations, provenance) the answer service's Turn as protobuf JSON, which the index never reads,
 * so fields the answer service adds later are kept without the index knowing them.
 */
export interface Turn {
  id: string;
  conversationId: string;
  /** 1-based position in the conversation, given by the store. */
  number: number;
  createdAt: Date;
  body: JsonObject;
}
