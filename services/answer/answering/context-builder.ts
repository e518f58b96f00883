import type { SearchHit } from "../../../lib/domain.ts";
import { parentHit, parentKey, type ParentBlock, type ParentEntry } from "./parent-context.ts";

/** A chunk admitted to the prompt, numbered 1..n in rank order; the model cites it as [number]. */
export interface ContextChunk {
  number: number;
  hit: SearchHit;
  /** Tokens of the rendered entry (header and text). */
  tokens: number;
  /** Set when the entry is a parent read in place of its matched children (hit then spans the parent). */
  parent?: ParentEntry;
}

export type ExclusionReason = "duplicate" | "over-budget";

export interface ExcludedHit {
  hit: SearchHit;
  reason: ExclusionReason;
  /** For duplicates: the number of the context chunk it repeats. */
  duplicateOf?: number;
}

export interface BuiltContext {
  chunks: ContextChunk[];
  excluded: ExcludedHit[];
  /** Tokens of all entries together, separators included. */
  tokens: number;
}

export interface ContextOptions {
  /** Most tokens the context block may take in the prompt. */
  tokenBudget: number;
  /** Counts tokens the way the chat model will, or close enough to stay inside its window. */
  countTokens: (text: string) => number;
  /** Two-level chunking: the parents of the hits that have one, by parentKey (parent-context.ts). */
  parents?: ReadonlyMap<string, ParentBlock>;
}

const ENTRY_SEPARATOR = "\n\n";

/**
 * Picks the hits that go into the prompt, in rank order: repeats of a chunk already taken (same id,
 * or the same text after normalisation — overlapping uploads of one file) are skipped, and so is any
 * chunk that would push the block past the budget, while smaller ones after it may still fit.
 *
 * With parents, a hit's parent enters in its place, at the rank of its best child, and later
 * children of the same parent are folded into that entry instead of repeating its text. A parent
 * too big for what is left of the budget is not tried again: its children then enter one by one
 * under the rules above, as they would without parents.
 */
export function buildContext(hits: readonly SearchHit[], options: ContextOptions): BuiltContext {
  const chunks: ContextChunk[] = [];
  const excluded: ExcludedHit[] = [];
  const byId = new Map<string, number>();
  const byText = new Map<string, number>();
  const parentEntries = new Map<string, ContextChunk>();
  const parentsTried = new Set<string>();
  const separatorTokens = options.countTokens(ENTRY_SEPARATOR);
  let used = 0;

  /** Takes the entry when it is new and fits; returns its number, or why not. */
  const admit = (hit: SearchHit, parent?: ParentEntry): number | ExcludedHit => {
    const key = normaliseForDedup(hit.chunk.text);
    const duplicateOf = byId.get(hit.chunk.id) ?? byText.get(key);
    if (duplicateOf !== undefined) return { hit, reason: "duplicate", duplicateOf };
    const number = chunks.length + 1;
    const tokens = options.countTokens(renderEntry(number, hit));
    const cost = tokens + (chunks.length > 0 ? separatorTokens : 0);
    if (used + cost > options.tokenBudget) return { hit, reason: "over-budget" };
    used += cost;
    chunks.push({ number, hit, tokens, ...(parent ? { parent } : {}) });
    byId.set(hit.chunk.id, number);
    byText.set(key, number);
    return number;
  };

  for (const hit of hits) {
    const key = parentKey(hit.chunk);
    const block = key ? options.parents?.get(key) : undefined;
    if (key && block) {
      const entry = parentEntries.get(key);
      if (entry) {
        entry.parent!.matched.push(hit);
        continue;
      }
      if (!parentsTried.has(key)) {
        parentsTried.add(key);
        const placed = admit(parentHit(hit, block, options.countTokens), { block, matched: [hit] });
        if (typeof placed === "number") {
          parentEntries.set(key, chunks[placed - 1]);
          continue;
        }
        // The same parent from an overlapping upload: the child is in it too.
        if (placed.reason === "duplicate") {
          excluded.push({ ...placed, hit });
          continue;
        }
      }
    }
    const placed = admit(hit);
    if (typeof placed !== "number") excluded.push(placed);
  }
  return { chunks, excluded, tokens: used };
}

/** The context block for the prompt: each chunk under a `[n] (file, page, section)` header. */
export function renderContext(chunks: readonly ContextChunk[]): string {
  return chunks.map((c) => renderEntry(c.number, c.hit)).join(ENTRY_SEPARATOR);
}

/** "handbook.pdf, p. 3, Security > Passwords" — where a chunk comes from, for headers and labels. */
export function describeSource(hit: SearchHit): string {
  const { page, pageEnd, sectionPath } = hit.chunk;
  const parts = [hit.fileName];
  if (page > 0) parts.push(pageEnd > page ? `pp. ${page}–${pageEnd}` : `p. ${page}`);
  if (sectionPath.length > 0) parts.push(sectionPath.join(" > "));
  return parts.join(", ");
}

function renderEntry(number: number, hit: SearchHit): string {
  return `[${number}] (${describeSource(hit)})\n${hit.chunk.text.trim()}`;
}

function normaliseForDedup(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}
