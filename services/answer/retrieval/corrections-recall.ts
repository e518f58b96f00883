// An assistant's managed corrections at query time (docs/ANSWERS.md, "Managed corrections"). The
// corrections base is searched as a mount of its own, for CORRECTIONS_TOP_K candidates, so a
// correction is never drowned in the documents' top-k; its candidates pass the question gate
// (correction-match.ts) or are left out; and the ones that pass rank first (mounted-retrieval.ts),
// stay first after a rerank or a fusion of query variants, and are answered from first
// (correction-answer.ts).
import type { KnowledgeBase, RetrievalMode, SearchHit } from "../../../lib/domain.ts";
import { CORRECTIONS_TOP_K } from "./correction-match.ts";
import type { Mount } from "./mounted-retrieval.ts";
import type { RetrievalDeps } from "./retrieval-stage.ts";
import type { ChunksAt } from "./whole-corrections.ts";

export interface Opened {
  knowledgeBases: KnowledgeBase[];
  deps: RetrievalDeps;
}

export interface OpenedWithCorrections extends Opened {
  /** The assistant's corrections base, when it has one that could be looked up. */
  corrections?: KnowledgeBase;
  /** Why the corrections base was not searched although the assistant has one. */
  correctionsSkipped?: string;
}

/**
 * Opens the assistant's bases together with its corrections base, in one look-up. The corrections
 * base is Quarry's, not the operator's choice: if it cannot be looked up (an operator deleted it),
 * the question is answered from the documents alone, and the turn says why; a failure of the other
 * bases is the caller's to see.
 */
export async function openWithCorrections(
  open: (query: string, mode: RetrievalMode, names: string[]) => Promise<Opened>,
  query: string,
  mode: RetrievalMode,
  names: string[],
  correctionsBaseId: string,
): Promise<OpenedWithCorrections> {
  if (!correctionsBaseId) return open(query, mode, names);
  let failure: unknown;
  try {
    const opened = await open(query, mode, [...names, correctionsBaseId]);
    return { knowledgeBases: opened.knowledgeBases.slice(0, -1), deps: opened.deps, corrections: opened.knowledgeBases.at(-1) };
  } catch (error) {
    failure = error;
  }
  const opened = await open(query, mode, names);
  return { ...opened, correctionsSkipped: `the corrections base ${correctionsBaseId} could not be opened (${(failure as Error).message}); answered without corrections` };
}

/**
 * The corrections base as a mount: its own small top-k, its candidates read whole (when chunks can
 * be looked up) and their questions embedded with its own model.
 */
export function correctionsMount(base: KnowledgeBase, deps: Pick<RetrievalDeps, "embed"> & { chunksAt?: ChunksAt }): Mount {
  return {
    knowledgeBaseId: base.id,
    topK: CORRECTIONS_TOP_K,
    priority: 0,
    corrections: { embedder: { model: base.embeddingModel, embed: (text) => deps.embed(text, base.embeddingModel) }, chunksAt: deps.chunksAt },
  };
}

/**
 * Moves the hits `first` picks before the rest, each group in its own order: a reranker or the
 * fusion of query variants scores corrections like any passage, but a matching correction was
 * ranked first on purpose.
 */
export function correctionsFirst(hits: SearchHit[], first: ((hit: SearchHit) => boolean) | undefined): SearchHit[] {
  if (!first) return hits;
  return [...hits.filter(first), ...hits.filter((h) => !first(h))];
}
