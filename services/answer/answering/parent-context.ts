// Two-level chunking on the answer side: the children a search matched are small and precise, but
// the answer reads their parent — the section, or the whole document when it fit the base's parent
// size — because that is where the reasoning around a matched sentence lives. The parent is read
// back from its children (the index stores each chunk's parent span and the run of its siblings,
// not a second copy of the text), and a citation still names the child whose text the cited
// sentence comes from.
import type { Chunk, ChunkParent, SearchHit } from "../../../lib/domain.ts";
import type { Citation } from "./citation.ts";
import { splitSentences } from "./answer-units.ts";
import { lexicalSupport } from "./citation-verifier.ts";
import { HAN } from "./content-terms.ts";
import { joinSpans, type ChunkPosition } from "../retrieval/neighbour-expansion.ts";

/** A parent as the answer reads it: its span, its text, and every child in document order. */
export interface ParentBlock {
  parent: ChunkParent;
  /** The parent's text, joined from its children (each exactly its span; overlaps cut by offset). */
  text: string;
  children: Chunk[];
}

/** What a context entry that is a parent carries beside its (parent-wide) hit. */
export interface ParentEntry {
  block: ParentBlock;
  /** The children that were hits, best-ranked first: the first is the entry's rank and id. */
  matched: SearchHit[];
}

/** The most chunks read back for parents in one answer: a bound on the look-up, not a setting. */
export const MAX_PARENT_CHUNKS = 2_000;

/** The key of a chunk's parent, or undefined when it has none the answer can read (no sibling run recorded). */
export function parentKey(chunk: Chunk): string | undefined {
  const p = chunk.parent;
  if (!p || p.chunkCount <= 0) return undefined;
  return `${chunk.knowledgeBaseId}\u0000${chunk.documentId}\u0000${p.index}`;
}

/**
 * Reads the parents of the hits that have one, each once, by fetching its children. A parent whose
 * children are not all there (the document was re-chunked in between) is left out: its hits are
 * then read alone, never from a parent with a hole in it.
 */
export async function loadParents(hits: readonly SearchHit[], chunksAt: (positions: ChunkPosition[]) => Promise<Chunk[]>): Promise<Map<string, ParentBlock>> {
  const wanted = new Map<string, Chunk>();
  let budget = MAX_PARENT_CHUNKS;
  for (const { chunk } of hits) {
    const key = parentKey(chunk);
    if (!key || wanted.has(key) || chunk.parent!.chunkCount > budget) continue;
    wanted.set(key, chunk);
    budget -= chunk.parent!.chunkCount;
  }
  if (wanted.size === 0) return new Map();
  const positions = [...wanted.values()].flatMap(({ knowledgeBaseId, documentId, parent }) =>
    Array.from({ length: parent!.chunkCount }, (_, i) => ({ knowledgeBaseId, documentId, index: parent!.firstChunkIndex + i })),
  );
  const stored = await chunksAt(positions);
  const childrenOf = new Map<string, Chunk[]>();
  for (const child of stored) {
    const key = parentKey(child);
    if (key && wanted.has(key)) childrenOf.set(key, [...(childrenOf.get(key) ?? []), child]);
  }
  const blocks = new Map<string, ParentBlock>();
  for (const [key, chunk] of wanted) {
    const parent = chunk.parent!;
    const children = (childrenOf.get(key) ?? []).filter((c) => c.parent!.start === parent.start && c.parent!.end === parent.end).sort((a, b) => a.index - b.index);
    if (children.length !== parent.chunkCount) continue;
    blocks.set(key, { parent, text: joinSpans(children), children });
  }
  return blocks;
}

/**
 * The hit a parent enters the context as: the best-ranked matched child's id, score and explanation
 * (its rank is the parent's), over the parent's span, text, pages and section.
 */
export function parentHit(best: SearchHit, block: ParentBlock, countTokens: (text: string) => number): SearchHit {
  const { parent, children, text } = block;
  return {
    ...best,
    chunk: {
      ...best.chunk,
      text,
      tokenCount: countTokens(text),
      start: parent.start,
      end: parent.end,
      page: children[0].page,
      pageEnd: Math.max(...children.map((c) => c.pageEnd)),
      sectionPath: [...parent.sectionPath],
    },
    explain: { ...best.explain },
  };
}

/**
 * The child a citation of a parent entry points at: the one whose text best supports the sentence
 * the marker ends (a verbatim quote scores 1); on a tie, a matched child before the others, the
 * better-ranked first; without a sentence, the best-ranked matched child.
 */
export function citedChild(entry: ParentEntry, sentence: string): { chunk: Chunk; score: number } {
  const matchedRank = new Map(entry.matched.map((hit, i) => [hit.chunk.id, i]));
  const rankOf = (c: Chunk) => matchedRank.get(c.id) ?? entry.matched.length;
  // The text since the previous marker may hold several sentences; the marker cites the last.
  const claim = splitSentences(sentence.trim(), HAN.test(sentence) ? "zh" : "en").at(-1)?.text ?? "";
  let best: Chunk = entry.matched[0].chunk;
  let bestSupport = claim ? lexicalSupport(claim, best.text) : 0;
  if (claim) {
    for (const child of [...entry.block.children].sort((a, b) => rankOf(a) - rankOf(b) || a.index - b.index)) {
      const support = lexicalSupport(claim, child.text);
      if (support > bestSupport) {
        best = child;
        bestSupport = support;
      }
    }
  }
  const hit = entry.matched.find((h) => h.chunk.id === best.id);
  // A child that was not itself a hit has no score of its own: it is cited under its parent's.
  return { chunk: best, score: (hit ?? entry.matched[0]).score };
}

/** The citation of a parent entry: the child's exact span, and the parent the model read. */
export function parentCitation(base: Citation, entry: ParentEntry, sentence: string, snippet: (text: string) => string): Citation {
  const { chunk, score } = citedChild(entry, sentence);
  return {
    ...base,
    chunkId: chunk.id,
    page: chunk.page,
    pageEnd: chunk.pageEnd,
    sectionPath: [...chunk.sectionPath],
    start: chunk.start,
    end: chunk.end,
    snippet: snippet(chunk.text),
    score,
    parent: entry.block.parent,
  };
}
