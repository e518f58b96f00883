// Reruns a plan's retrieval through the same stages a Chat turn runs (retrieval-options.ts: query
// expansion, search with fallback and fill, an assistant's per-base fusion, rerank, neighbours;
// then context-builder.ts), recording every search the stages send to the index and the pooled
// candidates before rerank and the top-k cut, so a chunk can be followed through each of them.
import type { KnowledgeBase, RetrievalMode, SearchHit, SearchQuery } from "../../../lib/domain.ts";
import type { ChatModel } from "../chat-models/chat-model.ts";
import { buildContext, type BuiltContext } from "../answering/context-builder.ts";
import { retrieveMounted } from "../retrieval/mounted-retrieval.ts";
import type { NeighbourDeps } from "../retrieval/neighbour-expansion.ts";
import type { Reranker } from "../retrieval/rerank/reranker.ts";
import { retrieveWithOptions, type RetrievalNotes } from "../retrieval/retrieval-options.ts";
import type { RetrievalDeps, RetrievalSettings } from "../retrieval/retrieval-stage.ts";
import type { StageRun } from "../answering/turn-record.ts";
import type { DebugPlan } from "./debug-plan.ts";

/** One search a stage sent to the index, with what came back. */
export interface RecordedSearch {
  query: SearchQuery;
  hits: SearchHit[];
}

export interface Rerun {
  knowledgeBases: KnowledgeBase[];
  settings: RetrievalSettings;
  searches: RecordedSearch[];
  /** The pooled ranking before rerank and the top-k cut. */
  candidates: SearchHit[];
  /** What retrieval kept, in order. */
  hits: SearchHit[];
  notes: RetrievalNotes;
  context: BuiltContext;
  stages: StageRun[];
  /** The index's search, unrecorded: for the deeper searches that follow a chunk. */
  search(query: SearchQuery): Promise<SearchHit[]>;
  chunksAt: NeighbourDeps["chunksAt"];
}

export interface RerunDeps {
  open(query: string, mode: RetrievalMode, knowledgeBases: string[]): Promise<{ knowledgeBases: KnowledgeBase[]; deps: RetrievalDeps & Pick<NeighbourDeps, "chunksAt"> }>;
  chatModel?: ChatModel;
  reranker?: Reranker;
  countTokens(text: string): number;
  contextTokenBudget: number;
  maxQuestionChars: number;
  signal?: AbortSignal;
}

export async function rerunRetrieval(plan: DebugPlan, deps: RerunDeps): Promise<Rerun> {
  const started = performance.now();
  const opened = await deps.open(plan.query, plan.mode, plan.names);
  const kbs = opened.knowledgeBases;
  const settings: RetrievalSettings = {
    knowledgeBaseIds: kbs.map((kb) => kb.id),
    mode: plan.mode,
    topK: plan.topK,
    minScore: plan.minScore,
    documentIds: [...plan.documentIds],
    ...(plan.metadataEquals ? { metadataEquals: plan.metadataEquals } : {}),
    maxQuestionChars: deps.maxQuestionChars,
    embeddingModels: Object.fromEntries(kbs.map((kb) => [kb.id, kb.embeddingModel])),
  };
  const searches: RecordedSearch[] = [];
  const base = opened.deps;
  const recording: RetrievalDeps = {
    ...base,
    search: async (query) => {
      const hits = await base.search(query);
      searches.push({ query, hits });
      return hits;
    },
  };
  const mounts = plan.mounts?.map((m, i) => ({ ...m, knowledgeBaseId: kbs[i].id }));
  let candidates: SearchHit[] = [];
  const stages: StageRun[] = [];
  const result = await retrieveWithOptions(
    plan.query,
    {
      ...recording,
      ...(mounts ? { retrieveFor: (query: string, d: RetrievalDeps, s: RetrievalSettings) => retrieveMounted(query, d, mounts, s) } : {}),
      chunksAt: base.chunksAt,
      countTokens: deps.countTokens,
      chatModel: deps.chatModel,
      reranker: deps.reranker,
      signal: deps.signal,
      onCandidates: (hits) => (candidates = [...hits]),
    },
    settings,
    plan.extras,
    deps.contextTokenBudget,
    (stage, at, note) => stages.push({ stage, startedAtMs: at - started, durationMs: performance.now() - at, note }),
  );
  const context = buildContext(result.hits, { tokenBudget: deps.contextTokenBudget, countTokens: deps.countTokens });
  return { knowledgeBases: kbs, settings, searches, candidates, hits: result.hits, notes: result.notes, context, stages, search: base.search, chunksAt: base.chunksAt };
}
