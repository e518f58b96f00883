import type { ChunkParent, HitExplain, RetrievalMode } from "../../../lib/domain.ts";
import type { ChatUsage } from "../chat-models/chat-model.ts";
import type { CitationCheck } from "./citation-verifier.ts";
import type { EvidenceJudgement } from "./evidence-support.ts";
import type { ExclusionReason } from "./context-builder.ts";
import type { RetrievalExtras, RetrievalNotes } from "../retrieval/retrieval-extras.ts";
import type { RetrievalSettings } from "../retrieval/retrieval-stage.ts";

/**
 * The stages an answer can go through, in order. rewrite, hyde or multi-query run when the request
 * asks for query expansion, rerank and neighbours when it asks for those (retrieval-options.ts),
 * parents when a hit's base chunks in two levels (parent-stage.ts).
 */
export type StageName =
  | "rewrite"
  | "corrections"
  | "hyde"
  | "multi-query"
  | "retrieve"
  | "rerank"
  | "neighbours"
  | "parents"
  | "build-context"
  | "evidence"
  | "generate"
  | "extract"
  | "verify";

export interface StageRun {
  stage: StageName;
  /** Milliseconds since the turn started. */
  startedAtMs: number;
  durationMs: number;
  /** A one-line outcome, e.g. "12 hits" or "failed: UnavailableError"; never document text. */
  note: string;
}

/** A hit the turn looked at, with why it ranks where it does and what became of it. */
export interface ConsideredHit {
  /** 1-based position in the retrieval results. */
  rank: number;
  chunkId: string;
  documentId: string;
  knowledgeBaseId: string;
  fileName: string;
  score: number;
  explain: HitExplain;
  /** The context number it got, or 0 when excluded. */
  contextNumber: number;
  excludedReason?: ExclusionReason;
  duplicateOf?: number;
}

export interface ContextEntry {
  number: number;
  chunkId: string;
  documentId: string;
  fileName: string;
  page: number;
  sectionPath: string[];
  tokens: number;
  /** Set when the entry is a parent (two-level chunking): chunkId is then its best matched child. */
  parent?: ChunkParent;
  /** The parent's children that were hits, best-ranked first. */
  matchedChunkIds?: string[];
}

/**
 * Everything worth knowing about one question-and-answer turn, for the answer's footer, logs
 * (without the question's text) and later a retrieval debugger. Holds ids, not document text.
 */
export interface TurnRecord {
  question: string;
  knowledgeBaseIds: string[];
  retrieval: RetrievalSettings;
  retrievalOptions?: RetrievalExtras;
  /** Degradation, rerank outcome and the queries searched; absent when retrieval failed. */
  retrievalNotes?: RetrievalNotes;
  stages: StageRun[];
  hits: ConsideredHit[];
  context: ContextEntry[];
  /** Context tokens in the prompt. */
  contextTokens: number;
  markers: {
    /** Context numbers the answer cited, in the order first cited. */
    used: number[];
    /** Numbers the model wrote that were not in the context, removed from the text (one entry per occurrence). */
    dropped: number[];
    /** Marker occurrences left in the answer, each pointing at a context chunk. */
    resolved: number;
    /** Of those, the ones whose sentence their chunk does not support. */
    unsupported: number;
  };
  /** The check of each resolved marker, in answer order (see citation-verifier.ts). */
  citationChecks: CitationCheck[];
  /** The chat model's name, or "extractive" when no model is configured. */
  model: string;
  usage: ChatUsage | null;
  extractive: boolean;
  /** Whether the evidence supported an answer (evidence-support.ts); unset until it was judged. */
  evidence?: EvidenceRecord;
  startedAt: Date;
  durationMs: number;
}

/** The evidence judgement, as the final event and the turn carry it: the best passage by its chunk's id. */
export type EvidenceRecord = Omit<EvidenceJudgement, "best" | "supportingDocumentIds"> & { bestChunkId: string };

/** What the answer's footer shows about retrieval. */
export interface RetrievalSummary {
  hitsConsidered: number;
  usedInContext: number;
  topScore: number;
  mode: RetrievalMode;
}
