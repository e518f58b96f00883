// The parents of two-level chunking. Small children match a question precisely (and cite a tight
// span); the parent around them — the section, or the whole document — carries the reasoning an
// answer needs. Parents are cut first and children inside them, so a child never crosses its
// parent and every child has exactly one.
import type { ChunkParent, ParentMode } from "../../lib/domain.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import type { TokenCounter } from "../../lib/tokens/tokenizer.ts";
import { RecursiveSplitter } from "./recursive-splitter.ts";

/**
 * A third of the answer's default context (QUARRY_CONTEXT_TOKENS 3,000): three parents fit beside
 * the question and the instructions, and 1,024 word pieces hold a typical section or a short
 * document (an argument, an abstract, a statute's article) whole.
 */
export const DEFAULT_PARENT_MAX_TOKENS = 1024;

/** A parent as cut, before its children are: chunkDocument records which chunks they are. */
export type ParentSpan = Omit<ChunkParent, "firstChunkIndex" | "chunkCount">;

export const PARENT_MODES: readonly ParentMode[] = ["none", "section", "document"];

/** A stretch of the document under one heading path, as the chunker's section pass finds it. */
export interface TextRegion {
  start: number;
  end: number;
  path: string[];
}

export function validateParentSettings(parent: ParentMode, parentMaxTokens: number, chunkSize: number): void {
  if (!PARENT_MODES.includes(parent)) {
    throw new InvalidInputError(`unknown parent mode "${String(parent)}"; choose one of ${PARENT_MODES.join(", ")}`);
  }
  if (parent === "none") return;
  if (!Number.isInteger(parentMaxTokens) || parentMaxTokens < chunkSize) {
    throw new InvalidInputError(`a parent must hold at least one chunk: parent size ${parentMaxTokens} is below the chunk size ${chunkSize}`);
  }
}

/**
 * The parents of a document's regions. "document": the whole text when it fits parentMaxTokens;
 * otherwise, and for "section", each region — cut into consecutive parents of at most
 * parentMaxTokens where it is longer (no overlap: a parent is read whole, repeated text would
 * only cost context).
 */
export function parentSpans(
  text: string,
  regions: readonly TextRegion[],
  mode: Exclude<ParentMode, "none">,
  parentMaxTokens: number,
  counter: TokenCounter,
): ParentSpan[] {
  const parents: Omit<ParentSpan, "index">[] = [];
  if (mode === "document" && regions.length > 0) {
    const start = regions[0].start;
    const end = regions[regions.length - 1].end;
    const tokenCount = counter.count(text.slice(start, end));
    if (tokenCount <= parentMaxTokens) return [{ index: 0, start, end, tokenCount, sectionPath: commonPath(regions.map((r) => r.path)) }];
  }
  const splitter = new RecursiveSplitter(counter, { chunkSize: parentMaxTokens, chunkOverlap: 0, separators: [] });
  for (const region of regions) {
    // The blank lines between sections make no chunks, so they make no parents either.
    if (!text.slice(region.start, region.end).trim()) continue;
    const tokenCount = counter.count(text.slice(region.start, region.end));
    if (tokenCount <= parentMaxTokens) {
      parents.push({ start: region.start, end: region.end, tokenCount, sectionPath: [...region.path] });
      continue;
    }
    for (const piece of splitter.split(text, region.start, region.end)) {
      parents.push({ start: piece.start, end: piece.end, tokenCount: piece.tokenCount, sectionPath: [...region.path] });
    }
  }
  return parents.map((p, index) => ({ index, ...p }));
}

/** The heading path every region shares: the document's own title when it has one. */
function commonPath(paths: readonly string[][]): string[] {
  const withPath = paths.filter((p) => p.length > 0);
  if (withPath.length === 0) return [];
  const first = withPath[0];
  let n = first.length;
  for (const p of withPath) {
    let i = 0;
    while (i < n && i < p.length && p[i] === first[i]) i++;
    n = i;
  }
  return first.slice(0, n);
}
