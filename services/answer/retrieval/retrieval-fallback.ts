import type { SearchHit } from "../../../lib/domain.ts";
import { QuarryError, UnavailableError } from "../../../lib/errors.ts";
import { retrieve as retrieveOnce, type Retrieval, type RetrievalDeps, type RetrievalSettings } from "./retrieval-stage.ts";

export interface DegradableRetrieval extends Retrieval {
  /** Set when vector search could not run and keyword search answered instead, with why. */
  degraded?: string;
  /** Keyword hits appended because the mode's own list came short of top-k. */
  filled: number;
}

/**
 * Retrieves, falling back to keyword search when the vector path is down. Only an outage
 * degrades (the embedder or the engine unavailable, or an unexpected failure); a refused question or
 * a model/dimension mismatch is the caller's to fix and propagates. If keyword search fails too,
 * the original failure propagates: an outage is never passed off as "nothing matched".
 *
 * The keyword search runs without min_score, which was set in the other mode's score scale. With
 * `fill`, a vector or hybrid list shorter than top-k (min_score cut it) is topped up with keyword
 * hits it lacks, each marked fallback.
 */
export async function retrieveWithFallback(question: string, deps: RetrievalDeps, settings: RetrievalSettings, fill = false): Promise<DegradableRetrieval> {
  const retrieve = deps.retrieveFor ?? retrieveOnce;
  if (settings.mode === "bm25") return { ...(await retrieve(question, deps, settings)), filled: 0 };
  let primary: Retrieval;
  try {
    primary = await retrieve(question, deps, settings);
  } catch (err) {
    if (!isOutage(err)) throw err;
    let keyword: Retrieval;
    try {
      keyword = await retrieve(question, deps, { ...settings, mode: "bm25", minScore: 0 });
    } catch {
      throw err;
    }
    return {
      hits: keyword.hits.map(markFallback),
      degraded: `vector search unavailable (${(err as Error).message}); keyword search answered instead`,
      filled: 0,
    };
  }
  if (!fill || primary.hits.length >= settings.topK) return { ...primary, filled: 0 };
  const keyword = await retrieve(question, deps, { ...settings, mode: "bm25", minScore: 0 });
  const have = new Set(primary.hits.map((h) => h.chunk.id));
  const extra = keyword.hits.filter((h) => !have.has(h.chunk.id)).slice(0, settings.topK - primary.hits.length);
  return { ...primary, hits: [...primary.hits, ...extra.map(markFallback)], filled: extra.length };
}

/** A failure of the system rather than of the request. */
export function isOutage(err: unknown): boolean {
  return err instanceof UnavailableError || !(err instanceof QuarryError);
}

function markFallback(hit: SearchHit): SearchHit {
  return { ...hit, explain: { ...hit.explain, fallback: true } };
}
