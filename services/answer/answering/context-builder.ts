import type { SearchHit } from "../../../lib/domain.ts";

/** A chunk admitted to the prompt, numbered 1..n in rank order; the model cites it as [number]. */
export interface ContextChunk {
  number: number;
  hit: SearchHit;
  /** Tokens of the rendered entry (header and text). */
  tokens: number;
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
}

const ENTRY_SEPARATOR = "\n\n";

/**
 * Picks the hits that go into the prompt, in rank order: repeats of a chunk already taken (same id,
 * or the same text after normalisation — overlapping uploads of one file) are skipped, and so is any
 * chunk that would push the block past the budget, while smaller ones after it may still fit.
 */
export function buildContext(hits: readonly SearchHit[], options: ContextOptions): BuiltContext {
  const chunks: ContextChunk[] = [];
  const excluded: ExcludedHit[] = [];
  const byId = new Map<string, number>();
  const byText = new Map<string, number>();
  const separatorTokens = options.countTokens(ENTRY_SEPARATOR);
  let used = 0;

  for (const hit of hits) {
    const key = normaliseForDedup(hit.chunk.text);
    const duplicateOf = byId.get(hit.chunk.id) ?? byText.get(key);
    if (duplicateOf !== undefined) {
      excluded.push({ hit, reason: "duplicate", duplicateOf });
      continue;
    }
    const number = chunks.length + 1;
    const tokens = options.countTokens(renderEntry(number, hit));
    const cost = tokens + (chunks.length > 0 ? separatorTokens : 0);
    if (used + cost > options.tokenBudget) {
      excluded.push({ hit, reason: "over-budget" });
      continue;
    }
    used += cost;
    chunks.push({ number, hit, tokens });
    byId.set(hit.chunk.id, number);
    byText.set(key, number);
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
