import type { ChunkDraft, ChunkingSettings, PageSpan, ParsedDocument, SectionSpan } from "../../lib/domain.ts";
import { InvalidInputError, QuarryError, TooLargeError } from "../../lib/errors.ts";
import { RecursiveSplitter } from "./recursive-splitter.ts";
import type { TokenCounter } from "../../lib/tokens/tokenizer.ts";
import { DEFAULT_PARENT_MAX_TOKENS, parentSpans, validateParentSettings } from "./parent-spans.ts";

/** Smallest chunk size we accept: below it chunks stop carrying enough meaning to retrieve. */
export const MIN_CHUNK_SIZE = 16;

/**
 * Tokens kept free for the special tokens the model wraps around each input. The counter counts
 * without them; BERT-style models such as MiniLM add [CLS] and [SEP], so of its 256 input tokens a
 * chunk may fill 254. For models that add none the reserve costs two tokens of thousands.
 */
export const SPECIAL_TOKEN_RESERVE = 2;

export interface ChunkingLimits {
  /** The embedding model's input limit as it reports it (EmbeddingModelInfo.maxInputTokens). */
  maxInputTokens: number;
  /** Most chunks one document may become (QUARRY_MAX_DOCUMENT_CHUNKS); unlimited when absent. */
  maxChunks?: number;
}

export const DEFAULT_MAX_DOCUMENT_CHUNKS = 50_000;

/** The most tokens one chunk may hold for a model that reads maxInputTokens. */
export function maxChunkTokens(maxInputTokens: number): number {
  return maxInputTokens - SPECIAL_TOKEN_RESERVE;
}

/**
 * 200 tokens with 30 of overlap (15%), or less for a smaller model. Not the model's full 254:
 * smaller chunks retrieve more precisely and cite tighter spans, 200 word pieces is still about
 * 150 English words or 200 Chinese characters (a full article of a statute), and the headroom lets
 * an indexer prepend a section title without overflowing the model.
 */
export function defaultChunkingSettings(maxInputTokens: number): ChunkingSettings {
  const chunkSize = Math.max(1, Math.min(200, maxChunkTokens(maxInputTokens)));
  return { strategy: "recursive", chunkSize, chunkOverlap: Math.floor(chunkSize * 0.15), separators: [], documentVector: DEFAULT_DOCUMENT_VECTOR };
}

/**
 * What a new base gets: auto. With both levels in one vector list (search/document-level.ts),
 * document vectors lift ArguAna (vector 0.5315 → 0.5716, hybrid 0.5778 → 0.5938) and cost SciFact
 * nothing (vector 0.6701 → 0.6730, hybrid 0.7205 both; docs/EVALUATION.md, issue #14). The price
 * is ingest time: a document of several chunks is embedded once more (SciFact 606 s → 844 s).
 * `--document-vector off` keeps a base to chunk vectors.
 */
export const DEFAULT_DOCUMENT_VECTOR = "auto" as const;

/** Throws InvalidInputError saying what is wrong and what is allowed. */
export function validateChunkingSettings(settings: ChunkingSettings, maxInputTokens: number): void {
  const { strategy, chunkSize, chunkOverlap, separators } = settings;
  const limit = maxChunkTokens(maxInputTokens);
  if (strategy !== "recursive") {
    throw new InvalidInputError(`unknown chunking strategy "${strategy}"; the only strategy is "recursive"`);
  }
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE) {
    throw new InvalidInputError(`chunk size must be a whole number of tokens from ${MIN_CHUNK_SIZE} to ${limit}, got ${chunkSize}`);
  }
  if (chunkSize > limit) {
    throw new InvalidInputError(
      `chunk size ${chunkSize} is above the embedding model's limit of ${limit} tokens per chunk ` +
        `(${maxInputTokens} input tokens minus ${SPECIAL_TOKEN_RESERVE} for the model's special tokens)`,
    );
  }
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0) {
    throw new InvalidInputError(`chunk overlap must be a whole number of tokens, 0 or more, got ${chunkOverlap}`);
  }
  if (chunkOverlap >= chunkSize) {
    throw new InvalidInputError(`chunk overlap ${chunkOverlap} must be smaller than the chunk size ${chunkSize}`);
  }
  if (!Array.isArray(separators) || separators.some((s) => typeof s !== "string")) {
    throw new InvalidInputError("separators must be a list of strings");
  }
  validateParentSettings(settings.parent ?? "none", settings.parentMaxTokens ?? DEFAULT_PARENT_MAX_TOKENS, chunkSize);
  if (settings.documentVector !== undefined && !["off", "auto"].includes(settings.documentVector)) {
    throw new InvalidInputError(`unknown document vector mode "${String(settings.documentVector)}"; it is "auto" or "off"`);
  }
}

/**
 * Splits a parsed document into chunk drafts, numbered from 0 in text order.
 *
 * A chunk never crosses a section boundary and carries the path of its section. The heading is
 * not prefixed into chunk text: text must stay exactly doc.text.slice(start, end) so citations
 * point at what the reader sees, and the token count must be what gets embedded. The section's
 * first chunk already holds the heading line itself; the sectionPath travels alongside for the
 * indexer and the answer prompt to use.
 */
export function chunkDocument(
  doc: ParsedDocument,
  settings: ChunkingSettings,
  counter: TokenCounter,
  limits: ChunkingLimits,
): ChunkDraft[] {
  validateChunkingSettings(settings, limits.maxInputTokens);
  const splitter = new RecursiveSplitter(counter, {
    chunkSize: settings.chunkSize,
    chunkOverlap: settings.chunkOverlap,
    separators: settings.separators,
    maxChunkTokens: maxChunkTokens(limits.maxInputTokens),
  });
  const pages = [...doc.pages].sort((a, b) => a.start - b.start);
  const drafts: ChunkDraft[] = [];
  const maxChunks = limits.maxChunks ?? Infinity;
  try {
    const regions = foldBareHeadings(doc.text, sectionRegions(doc.text.length, doc.sections));
    const parent = settings.parent ?? "none";
    // With two levels, children are cut inside each parent, and still never cross a section.
    const units =
      parent === "none"
        ? regions.map((region) => ({ region, parent: undefined }))
        : parentSpans(doc.text, regions, parent, settings.parentMaxTokens ?? DEFAULT_PARENT_MAX_TOKENS, counter).flatMap((p) =>
            regions
              .filter((r) => r.start < p.end && p.start < r.end)
              .map((r) => ({ region: { start: Math.max(r.start, p.start), end: Math.min(r.end, p.end), path: r.path }, parent: p })),
          );
    for (const { region, parent: parentSpan } of units) {
      for (const chunk of splitter.split(doc.text, region.start, region.end)) {
        if (drafts.length === maxChunks) {
          throw new TooLargeError(
            `the document splits into more than ${maxChunks.toLocaleString("en-US")} chunks, the limit per document ` +
              "(QUARRY_MAX_DOCUMENT_CHUNKS); split it into smaller files or raise the limit",
          );
        }
        drafts.push({
          index: drafts.length,
          text: chunk.text,
          tokenCount: chunk.tokenCount,
          page: pageAt(pages, chunk.start),
          pageEnd: pageAt(pages, chunk.end - 1),
          sectionPath: [...region.path],
          start: chunk.start,
          end: chunk.end,
          ...(parentSpan ? { parent: { ...parentSpan, sectionPath: [...parentSpan.sectionPath], firstChunkIndex: drafts.length, chunkCount: 0 } } : {}),
        });
      }
    }
    recordChildRanges(drafts);
  } catch (error) {
    // Splitting is a pure function of the text and the settings: what fails once fails on every
    // retry, so an unexpected error is reported as the document's, not left to be redriven.
    if (error instanceof QuarryError) throw error;
    throw new InvalidInputError(`the document could not be split into chunks: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  return drafts;
}

/** Children are cut in text order inside their parent, so each parent's children are one run of indexes. */
function recordChildRanges(drafts: ChunkDraft[]): void {
  const first = new Map<number, number>();
  const count = new Map<number, number>();
  for (const { index, parent } of drafts) {
    if (!parent) continue;
    if (!first.has(parent.index)) first.set(parent.index, index);
    count.set(parent.index, (count.get(parent.index) ?? 0) + 1);
  }
  for (const { parent } of drafts) {
    if (!parent) continue;
    parent.firstChunkIndex = first.get(parent.index)!;
    parent.chunkCount = count.get(parent.index)!;
  }
}

interface Region {
  start: number;
  end: number;
  path: string[];
}

/**
 * Cuts [0, length) into consecutive regions each governed by one section: the deepest section
 * covering it, so nested spans (a chapter holding its articles) and flat ones both work. Text no
 * section covers (a preamble before the first heading) gets an empty path.
 */
export function sectionRegions(length: number, sections: readonly SectionSpan[]): Region[] {
  const valid = sections
    .map((s) => ({ ...s, start: Math.max(0, s.start), end: Math.min(length, s.end) }))
    .filter((s) => s.start < s.end)
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const bounds = [...new Set([0, length, ...valid.flatMap((s) => [s.start, s.end])])].sort((a, b) => a - b);
  const regions: Region[] = [];
  let open: typeof valid = [];
  let nextSection = 0;
  let current: { section: SectionSpan | undefined; start: number } | undefined;
  for (let i = 0; i < bounds.length - 1; i++) {
    const at = bounds[i];
    open = open.filter((s) => s.end > at);
    while (nextSection < valid.length && valid[nextSection].start <= at) open.push(valid[nextSection++]);
    // Deepest wins; among equals the later-opened one, which is the inner one for nested spans.
    let governing: SectionSpan | undefined;
    for (const s of open) if (!governing || s.path.length >= governing.path.length) governing = s;
    if (current && current.section !== governing) {
      regions.push({ start: current.start, end: at, path: current.section?.path ?? [] });
      current = undefined;
    }
    current ??= { section: governing, start: at };
  }
  if (current) regions.push({ start: current.start, end: length, path: current.section?.path ?? [] });
  return regions;
}

/**
 * A section whose own text is just its heading line (a chapter title followed at once by its first
 * subsection) would become a chunk holding nothing but a title. Such a line joins the subsection
 * after it instead, as context; the chunk takes the subsection's path, which includes the chapter.
 */
function foldBareHeadings(text: string, regions: Region[]): Region[] {
  const folded: Region[] = [];
  let pendingStart: number | undefined;
  for (let i = 0; i < regions.length; i++) {
    const region = regions[i];
    const following = regions[i + 1];
    const bare = region.path.length > 0 && !text.slice(region.start, region.end).trim().includes("\n");
    if (bare && following && following.start === region.end && isWithin(following.path, region.path)) {
      pendingStart ??= region.start;
      continue;
    }
    folded.push({ ...region, start: pendingStart ?? region.start });
    pendingStart = undefined;
  }
  return folded;
}

function isWithin(path: string[], ancestor: string[]): boolean {
  return path.length > ancestor.length && ancestor.every((heading, i) => path[i] === heading);
}

/** The page holding offset `at`; an offset between pages belongs to the page before it. */
function pageAt(pages: readonly PageSpan[], at: number): number {
  if (pages.length === 0) return 0;
  let low = 0;
  let high = pages.length - 1;
  if (at < pages[0].start) return pages[0].number;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (pages[mid].start <= at) low = mid;
    else high = mid - 1;
  }
  return pages[low].number;
}
