// The "parents" stage of an answer: between retrieval and the context, the parents of the hits
// that have one are read (parent-context.ts). It only runs for bases chunked in two levels.
import type { Chunk, SearchHit } from "../../../lib/domain.ts";
import type { BuiltContext } from "./context-builder.ts";
import type { ChunkPosition } from "../retrieval/neighbour-expansion.ts";
import { loadParents, parentKey, type ParentBlock } from "./parent-context.ts";

export interface ParentStageDeps {
  /** Absent when this answer path has no chunk look-up: hits are then read alone. */
  chunksAt?(positions: ChunkPosition[]): Promise<Chunk[]>;
}

/**
 * The parents of the hits, or none when no hit has one. A failed read does not fail the answer:
 * the matched children are what retrieval found and are read alone, and the stage says so.
 */
export async function readParents(hits: readonly SearchHit[], deps: ParentStageDeps, onStage: (startedAt: number, note: string) => void): Promise<Map<string, ParentBlock>> {
  const wanted = new Set(hits.map((h) => parentKey(h.chunk)).filter((k) => k !== undefined));
  if (wanted.size === 0) return new Map();
  const at = performance.now();
  if (!deps.chunksAt) {
    onStage(at, "skipped: no chunk look-up; matched chunks read alone");
    return new Map();
  }
  try {
    const parents = await loadParents(hits, deps.chunksAt);
    const chunks = [...parents.values()].reduce((n, p) => n + p.children.length, 0);
    const missing = wanted.size - parents.size;
    onStage(at, `${parents.size} parents read (${chunks} chunks)${missing ? `; ${missing} incomplete or over the limit, their chunks read alone` : ""}`);
    return parents;
  } catch (error) {
    onStage(at, `failed: ${(error as Error).name}; matched chunks read alone`);
    return new Map();
  }
}

/** ", 2 parents holding 5 matched chunks" for the build-context stage's note; empty without parents. */
export function describeParents(context: BuiltContext): string {
  const entries = context.chunks.filter((c) => c.parent);
  if (entries.length === 0) return "";
  const matched = entries.reduce((n, c) => n + c.parent!.matched.length, 0);
  return `, ${entries.length} parents holding ${matched} matched chunks`;
}
