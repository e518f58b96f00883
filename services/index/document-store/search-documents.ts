// How a chunk is stored as a search-engine document, for the engines that speak the OpenSearch /
// Elasticsearch query DSL: the source shape, its field mappings, the filters every search applies
// and the BM25 request. Backend-free (no client import), so both backends build the same records
// and the same BM25 query; only what differs between them (the vector field, the kNN query, the
// client calls) stays in each backend.
import { createHash } from "node:crypto";
import type { Chunk, ChunkParent, ChunkRevision, EmbeddedChunk, SearchQuery } from "../../../lib/domain.ts";
import type { WeightedTerms } from "../search/query-terms.ts";
import type { EngineHit } from "../search/rrf-fusion.ts";

export type ChunkRecordType = "chunk" | "document";

export interface ChunkSource {
  record_type: ChunkRecordType;
  chunk_id: string;
  knowledge_base_id: string;
  document_id: string;
  file_name: string;
  chunk_index: number;
  text: string;
  token_count: number;
  page: number;
  page_end: number;
  section_path: string[];
  start_offset: number;
  end_offset: number;
  enabled: boolean;
  /** Two-level chunking: the chunk's parent; absent for a chunk without one. */
  parent?: ParentSource;
  /** A chunk corrected or written by hand; absent for one as ingested. Stored, never searched. */
  revision?: { version: number; manual: boolean; original_text: string };
  /** Disabled by hand; enabled (what searches filter on) is then false whatever the document's flag. */
  disabled?: boolean;
}

/** Stored, never searched: the answer reads it back with the hit. */
export interface ParentSource {
  index: number;
  start_offset: number;
  end_offset: number;
  token_count: number;
  section_path: string[];
  first_chunk_index: number;
  chunk_count: number;
}

/** The parent field's mapping; also added to a chunk index made before parents were stored. */
export const PARENT_FIELD_MAPPING = { parent: { type: "object", enabled: false } };

/** The fields of chunk edits; also added to a chunk index made before chunks were edited. */
export const EDIT_FIELD_MAPPINGS = { revision: { type: "object", enabled: false }, disabled: { type: "boolean" } };

/**
 * The vector fields: every chunk's own, and on a document's first chunk the vector of the whole
 * document (where the base keeps document vectors), so it is replaced, disabled and deleted with
 * the document's chunks and an index swap carries it.
 */
export type VectorField = "embedding" | "document_embedding";

/** Fields searches never need back: the vectors and the segmented copy of the text. */
export const CHUNK_SOURCE_EXCLUDES = ["embedding", "document_embedding", "search_terms"];

// The per-document marker that remembers a disabled document even before it has chunks.
const DOCUMENT_MARKER_PREFIX = "__document__:";

export function documentMarkerId(documentId: string): string {
  return `${DOCUMENT_MARKER_PREFIX}${documentId}`;
}

/** The marker record written beside a document's chunks. */
export function documentMarkerSource(knowledgeBaseId: string, documentId: string, enabled: boolean, fileName?: string): Record<string, unknown> {
  return { record_type: "document", document_id: documentId, knowledge_base_id: knowledgeBaseId, ...(fileName === undefined ? {} : { file_name: fileName }), enabled };
}

/** A valid index-name part for a knowledge base id. */
export function indexSlug(knowledgeBaseId: string): string {
  // Ids are meant to be kb_<hex>; anything else is hashed so the name stays a valid index name.
  if (/^[a-z0-9][a-z0-9_]{0,100}$/.test(knowledgeBaseId)) return knowledgeBaseId;
  return `h${createHash("sha256").update(knowledgeBaseId).digest("hex").slice(0, 32)}`;
}

/**
 * Mappings of every chunk-index field except the vector (whose type differs per engine).
 * searchTermsAnalyzer must split on whitespace only: the text is segmented before indexing.
 */
export function chunkFieldMappings(searchTermsAnalyzer: string): Record<string, Record<string, unknown>> {
  return {
    record_type: { type: "keyword" },
    chunk_id: { type: "keyword" },
    knowledge_base_id: { type: "keyword" },
    document_id: { type: "keyword" },
    file_name: { type: "keyword" },
    chunk_index: { type: "integer" },
    text: { type: "text", index: false },
    search_terms: { type: "text", analyzer: searchTermsAnalyzer },
    token_count: { type: "integer" },
    page: { type: "integer" },
    page_end: { type: "integer" },
    section_path: { type: "keyword" },
    start_offset: { type: "integer" },
    end_offset: { type: "integer" },
    enabled: { type: "boolean" },
    ...PARENT_FIELD_MAPPING,
    ...EDIT_FIELD_MAPPINGS,
  };
}

/** documentEnabled is the document's flag; a chunk disabled by hand is stored not enabled whatever it is. */
export function toChunkSource(chunk: EmbeddedChunk, knowledgeBaseId: string, documentId: string, fileName: string, documentEnabled: boolean): ChunkSource {
  return {
    record_type: "chunk",
    chunk_id: chunk.id,
    knowledge_base_id: knowledgeBaseId,
    document_id: documentId,
    file_name: fileName,
    chunk_index: chunk.index,
    text: chunk.text,
    token_count: chunk.tokenCount,
    page: chunk.page,
    page_end: chunk.pageEnd,
    section_path: chunk.sectionPath,
    start_offset: chunk.start,
    end_offset: chunk.end,
    enabled: documentEnabled && !chunk.disabled,
    ...(chunk.parent ? { parent: toParentSource(chunk.parent) } : {}),
    ...(chunk.revision ? { revision: { version: chunk.revision.version, manual: chunk.revision.manual, original_text: chunk.revision.originalText } } : {}),
    ...(chunk.disabled ? { disabled: true } : {}),
  };
}

function toParentSource(p: ChunkParent): ParentSource {
  return {
    index: p.index,
    start_offset: p.start,
    end_offset: p.end,
    token_count: p.tokenCount,
    section_path: p.sectionPath,
    first_chunk_index: p.firstChunkIndex,
    chunk_count: p.chunkCount,
  };
}

function parentFromSource(p: ParentSource): ChunkParent {
  return {
    index: p.index,
    start: p.start_offset,
    end: p.end_offset,
    tokenCount: p.token_count,
    sectionPath: p.section_path ?? [],
    firstChunkIndex: p.first_chunk_index ?? 0,
    chunkCount: p.chunk_count ?? 0,
  };
}

export function chunkFromSource(source: ChunkSource): Chunk {
  return {
    id: source.chunk_id,
    documentId: source.document_id,
    knowledgeBaseId: source.knowledge_base_id,
    index: source.chunk_index,
    text: source.text,
    tokenCount: source.token_count,
    page: source.page,
    pageEnd: source.page_end,
    sectionPath: source.section_path ?? [],
    start: source.start_offset,
    end: source.end_offset,
    ...(source.parent ? { parent: parentFromSource(source.parent) } : {}),
    ...(source.revision ? { revision: revisionFromSource(source.revision) } : {}),
    ...(source.disabled ? { disabled: true } : {}),
  };
}

function revisionFromSource(r: NonNullable<ChunkSource["revision"]>): ChunkRevision {
  return { version: r.version, manual: r.manual, originalText: r.original_text ?? "" };
}

export function bm25EngineHit(source: ChunkSource, score: number | null | undefined): EngineHit {
  return { chunk: chunkFromSource(source), fileName: source.file_name, score: score ?? 0 };
}

/** Lucene's cosine score is (1 + cos) / 2; hits report the cosine itself, like the embedded engine. */
export function cosineFromLuceneScore(score: number): number {
  return 2 * score - 1;
}

export function vectorEngineHit(source: ChunkSource, score: number | null | undefined): EngineHit {
  return { chunk: chunkFromSource(source), fileName: source.file_name, score: cosineFromLuceneScore(score ?? 0) };
}

/** What every search keeps: enabled chunks, of the asked documents when any are named. */
export function chunkFilters(query: SearchQuery): Record<string, unknown>[] {
  const clauses: Record<string, unknown>[] = [{ term: { record_type: "chunk" } }, { term: { enabled: true } }];
  if (query.documentIds.length > 0) clauses.push({ terms: { document_id: query.documentIds } });
  return clauses;
}

/** The chunks of one document (its marker excluded), but for the ids in except. */
export function documentChunksQuery(documentId: string, except: string[] = []): Record<string, unknown> {
  const filter = [{ term: { record_type: "chunk" } }, { term: { document_id: documentId } }];
  return { bool: except.length > 0 ? { filter, must_not: [{ ids: { values: except } }] } : { filter } };
}

/** The chunks of one document that a document's flag reaches: all but those disabled by hand. */
export function documentFlaggedChunksQuery(documentId: string): Record<string, unknown> {
  return { bool: { filter: [{ term: { record_type: "chunk" } }, { term: { document_id: documentId } }], must_not: [{ term: { disabled: true } }] } };
}

/** Every record of one document: its chunks and its marker. */
export function documentRecordsQuery(documentId: string): Record<string, unknown> {
  return { term: { document_id: documentId } };
}

/** Chunks by id (never a marker), without the fields searches never need back. */
export function chunksByIdSearchBody(ids: string[]): Record<string, unknown> {
  return {
    size: ids.length,
    _source: { excludes: CHUNK_SOURCE_EXCLUDES },
    query: { bool: { filter: [{ ids: { values: ids } }, { term: { record_type: "chunk" } }] } },
  };
}

/** Chunks at these places in their documents, one filter per document. */
export function chunksAtSearchBody(positions: { documentId: string; index: number }[]): Record<string, unknown> {
  const byDocument = new Map<string, number[]>();
  for (const p of positions) byDocument.set(p.documentId, [...(byDocument.get(p.documentId) ?? []), p.index]);
  return {
    size: positions.length,
    _source: { excludes: CHUNK_SOURCE_EXCLUDES },
    query: {
      bool: {
        filter: [{ term: { record_type: "chunk" } }],
        should: [...byDocument].map(([documentId, indexes]) => ({
          bool: { filter: [{ term: { document_id: documentId } }, { terms: { chunk_index: indexes } }] },
        })),
        minimum_should_match: 1,
      },
    },
  };
}

/** Ties in score are broken by chunk id, so equal inputs always rank the same. */
export const SCORE_THEN_CHUNK_ID = [{ _score: "desc" }, { chunk_id: "asc" }];

/**
 * The body of the BM25 bool query over the question's pre-segmented terms in their weight groups
 * (query-terms.ts): one match per group, boosted by its weight. Lucene adds the should clauses'
 * scores, and a clause's score is its terms' BM25 sum times its boost, so this is the weighted sum
 * SQLite computes.
 */
export function bm25BoolQuery(query: SearchQuery, groups: readonly WeightedTerms[]): { must: Record<string, unknown>[]; filter: Record<string, unknown>[] } {
  return { must: [termsMatch(groups)], filter: chunkFilters(query) };
}

// The terms are already segmented and lower-cased; match (not query_string) takes them as plain words.
function termsMatch(groups: readonly WeightedTerms[]): Record<string, unknown> {
  const matches = groups.map(({ terms, weight }) => ({ match: { search_terms: { query: terms.join(" "), operator: "or", boost: weight } } }));
  return matches.length === 1 ? matches[0] : { bool: { should: matches, minimum_should_match: 1 } };
}

/** The question's weighted terms in the form some of the searched bases store them in. */
export interface TermsForBases {
  knowledgeBaseIds: string[];
  groups: WeightedTerms[];
}

/**
 * The BM25 request over bases that store terms in different forms (stemmed by Quarry or not, see
 * TermsAnalysis): each form matches only its own bases' chunks. A filter adds nothing to a score, so
 * every chunk scores exactly as it would under bm25SearchBody with its bases' form.
 */
export function bm25SearchBodyByForm(query: SearchQuery, forms: readonly TermsForBases[], size: number): Record<string, unknown> {
  const should = forms.map(({ knowledgeBaseIds, groups }) => ({ bool: { must: [termsMatch(groups)], filter: [{ terms: { knowledge_base_id: knowledgeBaseIds } }] } }));
  return {
    size,
    _source: { excludes: CHUNK_SOURCE_EXCLUDES },
    query: { bool: { must: [{ bool: { should, minimum_should_match: 1 } }], filter: chunkFilters(query) } },
    sort: SCORE_THEN_CHUNK_ID,
    track_scores: true,
  };
}

/** The BM25 request over the question's weighted terms. */
export function bm25SearchBody(query: SearchQuery, groups: readonly WeightedTerms[], size: number): Record<string, unknown> {
  return {
    size,
    _source: { excludes: CHUNK_SOURCE_EXCLUDES },
    query: { bool: bm25BoolQuery(query, groups) },
    sort: SCORE_THEN_CHUNK_ID,
    track_scores: true,
  };
}
