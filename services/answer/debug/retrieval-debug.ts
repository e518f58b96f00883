// "Why wasn't this found?" — DebugRetrieval. Reruns a turn's (or an ad-hoc query's) retrieval
// through the same stages as Chat (retrieval-rerun.ts), finds the chunks that hold what the person
// expected (a text, a chunk, a document) in the searched bases, follows each through every search,
// list and stage (chunk-trace.ts), and says where it was lost (debug-verdict.ts). The report is the
// protobuf message GetTurn's provenance sits beside; no transport here.
import { create } from "@bufbuild/protobuf";
import { RetrievalDebugReportSchema, type RetrievalDebugReport } from "../../../gen/quarry/answer/v1/answer_pb.ts";
import {
  ChunkTraceSchema,
  ExpectationMatch,
  RankSource,
  RetrievalLoss,
  type ChunkTrace,
} from "../../../gen/quarry/answer/v1/retrieval_debug_pb.ts";
import type { Assistant } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import type { Chunk, DocumentRecord, SearchHit } from "../../../lib/domain.ts";
import { toProtoStatus } from "../../../lib/pipeline/progress.ts";
import { modeToProto } from "../../../lib/proto-convert.ts";
import { rewriteModeOf } from "../retrieval/query-rewrite-mode.ts";
import { traceSearch } from "./chunk-trace.ts";
import type { DebugLookups } from "./debug-lookups.ts";
import { planDebug, type DebugPlan, type DebugRequest, type Expectation } from "./debug-plan.ts";
import { judge, LOSS_ORDER, type RankSource as DomainRankSource, type RetrievalLossKind, type SearchTrace, type TraceFacts } from "./debug-verdict.ts";
import { rerunRetrieval, type Rerun, type RerunDeps } from "./retrieval-rerun.ts";

export interface RetrievalDebugDeps extends RerunDeps {
  lookups: DebugLookups;
  /** By id or name; NotFoundError when there is none. */
  getAssistant(idOrName: string): Promise<Assistant>;
}

/** Chunks holding the expected text that are followed through the retrieval (the furthest first). */
const MAX_TRACED = 5;
/** Chunks a text find returns. */
const FIND_LIMIT = 20;
/** Distinct searches a chunk is followed through (a multi-query rerun runs one per variant and base). */
const MAX_SEARCHES = 8;

interface Target {
  chunk: Chunk;
  fileName: string;
  enabled: boolean;
  match: ExpectationMatch;
  document?: DocumentRecord;
}

interface Targets {
  exists: boolean;
  note: string;
  matched: number;
  targets: Target[];
  /** Why nothing was found, for the verdict. */
  missing?: string;
}

export async function debugRetrieval(request: DebugRequest, deps: RetrievalDebugDeps): Promise<RetrievalDebugReport> {
  const started = performance.now();
  const plan = await planDebug(request, { getTurn: (id) => deps.lookups.getTurn(id), getAssistant: (a) => deps.getAssistant(a) });
  const rerun = await rerunRetrieval(plan, deps);
  const found = await findTargets(request.expect, rerun, deps.lookups);
  const followed = byProgress(found.targets, rerun).slice(0, MAX_TRACED);
  const traces = await Promise.all(followed.map((t) => traceTarget(t, request.expect.text.trim(), plan, rerun, deps.contextTokenBudget)));
  traces.sort((a, b) => LOSS_ORDER.indexOf(a.loss) - LOSS_ORDER.indexOf(b.loss));
  const best = traces[0];
  const verdict = !found.exists
    ? `not in the knowledge base: ${found.missing ?? found.note}`
    : `${best.verdict}${found.matched > 1 || traces.length > 1 ? ` (${best.target.fileName}, chunk ${best.target.chunk.index}; ${found.matched} chunks hold it)` : ""}`;
  const p = plan.turn?.provenance;
  const contextIds = rerun.context.chunks.map((c) => c.hit.chunk.id);
  return create(RetrievalDebugReportSchema, {
    turnId: plan.turn?.id ?? "",
    query: plan.query,
    knowledgeBaseIds: rerun.settings.knowledgeBaseIds,
    assistantId: plan.assistantId,
    settings: {
      mode: modeToProto(plan.mode),
      topK: plan.topK,
      minScore: plan.minScore,
      documentIds: plan.documentIds,
      metadataEquals: plan.metadataEquals ?? {},
      rerank: plan.extras.rerank ?? false,
      queryRewrite: rewriteModeOf(plan.extras.queryExpansion),
      queryVariants: plan.extras.queryVariants ?? 0,
      neighbourChunks: plan.extras.neighbourChunks ?? 0,
      bm25Fill: plan.extras.bm25Fill ?? false,
    },
    expect: request.expect,
    exists: found.exists,
    existenceNote: found.note,
    chunks: traces.map((t) => t.proto),
    matchingChunks: found.matched,
    retrieved: rerun.hits.map((hit, i) => {
      const numbered = rerun.context.chunks.find((c) => c.hit === hit);
      const excluded = rerun.context.excluded.find((e) => e.hit === hit);
      return {
        rank: i + 1,
        chunkId: hit.chunk.id,
        knowledgeBaseId: hit.chunk.knowledgeBaseId,
        listRank: listRankOf(hit, rerun),
        score: hit.score,
        contextNumber: numbered?.number ?? 0,
        excludedReason: excluded?.reason ?? "",
        duplicateOf: excluded?.duplicateOf ?? 0,
      };
    }),
    context: rerun.context.chunks.map((c) => ({
      number: c.number,
      chunkId: c.hit.chunk.id,
      documentId: c.hit.chunk.documentId,
      knowledgeBaseId: c.hit.chunk.knowledgeBaseId,
      fileName: c.hit.fileName,
      page: c.hit.chunk.page,
      sectionPath: c.hit.chunk.sectionPath,
      tokens: c.tokens,
    })),
    contextTokens: rerun.context.tokens,
    notes: {
      degraded: rerun.notes.degraded ?? "",
      rerankSkipped: rerun.notes.rerankSkipped ?? "",
      queries: rerun.notes.queries,
      fallbackHits: rerun.notes.fallbackHits,
      reranked: rerun.notes.reranked,
      reranker: rerun.notes.reranker ?? "",
    },
    sameContextAsTurn: p ? p.context.length === contextIds.length && p.context.every((c, i) => c.chunkId === contextIds[i]) : false,
    loss: found.exists ? LOSS_TO_PROTO[best.loss] : RetrievalLoss.NOT_IN_KNOWLEDGE_BASE,
    verdict,
    deepWindow: plan.deepWindow,
    durationMs: performance.now() - started,
  });
}

/** The chunks that hold what was expected, in the bases the rerun searched. */
async function findTargets(expect: Expectation, rerun: Rerun, lookups: DebugLookups): Promise<Targets> {
  const kbIds = rerun.settings.knowledgeBaseIds;
  const bases = `${kbIds.length} knowledge base${kbIds.length === 1 ? "" : "s"}`;
  const documents = new Map<string, Promise<DocumentRecord | undefined>>();
  const documentOf = (id: string) => {
    if (!documents.has(id)) documents.set(id, lookups.findDocument(id));
    return documents.get(id)!;
  };
  const text = expect.text.trim();
  const chunkId = expect.chunkId.trim();
  const documentId = expect.documentId.trim();

  if (text) {
    const find = await lookups.findChunks({ knowledgeBaseIds: kbIds, text, limit: FIND_LIMIT, documentIds: documentId ? [documentId] : [] });
    const chunks = chunkId ? find.chunks.filter((c) => c.chunk.id === chunkId) : find.chunks;
    const capped = find.complete ? "" : "; the scan stopped at its cap: a chunk not read may still hold it";
    const scanned = `${find.scanned.toLocaleString("en-US")} chunks`;
    const read = `${scanned} of ${bases} read${capped}`;
    const where = [documentId && `in document ${documentId}`, chunkId && `in chunk ${chunkId}`].filter(Boolean).join(" ");
    const targets = await Promise.all(
      chunks.map(async (c) => ({ ...c, match: c.exact ? ExpectationMatch.EXACT : ExpectationMatch.NORMALISED, document: await documentOf(c.chunk.documentId) })),
    );
    const matched = chunkId ? chunks.length : find.matched;
    return {
      exists: targets.length > 0,
      note: `${read}; ${matched} contain${matched === 1 ? "s" : ""} the text${where ? ` ${where}` : ""}`,
      matched,
      targets,
      missing: `no chunk${where ? ` ${where}` : ""} of the ${bases} searched contains the text (${scanned} read${capped})`,
    };
  }

  if (chunkId) {
    const [chunk] = await lookups.getChunks([chunkId]);
    if (!chunk) return { exists: false, note: `no chunk has the id ${chunkId}`, matched: 0, targets: [] };
    const document = await documentOf(chunk.documentId);
    if (!kbIds.includes(chunk.knowledgeBaseId)) {
      return { exists: false, note: `chunk ${chunkId} is in knowledge base ${chunk.knowledgeBaseId}, which this retrieval does not search`, matched: 0, targets: [] };
    }
    if (documentId && chunk.documentId !== documentId) {
      return { exists: false, note: `chunk ${chunkId} belongs to document ${chunk.documentId}, not ${documentId}`, matched: 0, targets: [] };
    }
    return {
      exists: true,
      note: `chunk ${chunkId} is stored (${document?.fileName ?? chunk.documentId}, chunk ${chunk.index})`,
      matched: 1,
      targets: [{ chunk, fileName: document?.fileName ?? "", enabled: document?.enabled ?? true, match: ExpectationMatch.CHUNK_ID, document }],
    };
  }

  const document = await documentOf(documentId);
  if (!document) return { exists: false, note: `no document has the id ${documentId}`, matched: 0, targets: [] };
  if (!kbIds.includes(document.knowledgeBaseId)) {
    return { exists: false, note: `document ${documentId} is in knowledge base ${document.knowledgeBaseId}, which this retrieval does not search`, matched: 0, targets: [] };
  }
  const chunk = await documentChunk(documentId, document, rerun);
  if (!chunk) return { exists: false, note: `document ${document.fileName} (${document.status}) has no stored chunks`, matched: 0, targets: [] };
  return {
    exists: true,
    note: `document ${document.fileName} is stored (${document.status}, ${document.chunkCount} chunks); followed: its chunk nearest the context`,
    matched: 1,
    targets: [{ chunk, fileName: document.fileName, enabled: document.enabled, match: ExpectationMatch.DOCUMENT, document }],
  };
}

/** The document's chunk that got furthest: in the context, retrieved, or its best for the query. */
async function documentChunk(documentId: string, document: DocumentRecord, rerun: Rerun): Promise<Chunk | undefined> {
  const reached = rerun.context.chunks.find((c) => c.hit.chunk.documentId === documentId) ?? rerun.hits.find((h) => h.chunk.documentId === documentId);
  if (reached) return "hit" in reached ? reached.hit.chunk : reached.chunk;
  const first = rerun.searches.find((s) => s.query.knowledgeBaseIds.includes(document.knowledgeBaseId));
  if (first) {
    const [best] = await rerun.search({ ...first.query, knowledgeBaseIds: [document.knowledgeBaseId], documentIds: [documentId], topK: 1, minScore: 0, metadataEquals: undefined });
    if (best) return best.chunk;
  }
  // A disabled document is not searchable: its first chunk stands for it.
  const [firstChunk] = await rerun.chunksAt([{ knowledgeBaseId: document.knowledgeBaseId, documentId, index: 0 }]);
  return firstChunk;
}

/** Targets that got further first, so the ones followed are those worth reading. */
function byProgress(targets: Target[], rerun: Rerun): Target[] {
  const score = (t: Target) => {
    const id = t.chunk.id;
    if (rerun.context.chunks.some((c) => c.hit.chunk.id === id || c.hit.explain.mergedChunkIds?.includes(id))) return 0;
    if (rerun.hits.some((h) => h.chunk.id === id)) return 1;
    if (rerun.candidates.some((h) => h.chunk.id === id)) return 2;
    if (rerun.searches.some((s) => s.hits.some((h) => h.chunk.id === id))) return 3;
    return t.enabled ? 4 : 5;
  };
  return [...targets].sort((a, b) => score(a) - score(b));
}

async function traceTarget(target: Target, expected: string, plan: DebugPlan, rerun: Rerun, contextTokenBudget: number): Promise<{ loss: RetrievalLossKind; verdict: string; target: Target; proto: ChunkTrace }> {
  const id = target.chunk.id;
  const unsearchable = whyUnsearchable(target, plan);
  const searches: SearchTrace[] = [];
  if (!unsearchable) {
    const seen = new Set<string>();
    for (const recorded of rerun.searches) {
      const q = recorded.query;
      if (!q.knowledgeBaseIds.includes(target.chunk.knowledgeBaseId)) continue;
      const key = JSON.stringify([q.mode, q.text, q.topK, q.minScore, q.candidates, q.knowledgeBaseIds, q.weights, q.vector ? Array.from(q.vector.slice(0, 4)) : []]);
      if (seen.has(key) || seen.size >= MAX_SEARCHES) continue;
      seen.add(key);
      searches.push(await traceSearch(recorded, { chunkId: id, documentId: target.chunk.documentId, knowledgeBaseId: target.chunk.knowledgeBaseId }, { deepWindow: plan.deepWindow, widenedForRerank: Boolean(plan.extras.rerank), search: rerun.search }));
    }
  }
  const holds = (hit: SearchHit) => hit.chunk.id === id || (hit.explain.mergedChunkIds ?? []).includes(id);
  const candidateIndex = rerun.candidates.findIndex((h) => h.chunk.id === id);
  const retrievedIndex = rerun.hits.findIndex(holds);
  const numbered = rerun.context.chunks.find((c) => holds(c.hit));
  const excluded = rerun.context.excluded.find((e) => e.hit.chunk.id === id);
  const facts: TraceFacts = {
    unsearchable,
    searches,
    inSearchHits: rerun.searches.some((s) => s.hits.some((h) => h.chunk.id === id)),
    candidateRank: candidateIndex + 1,
    candidateCount: rerun.candidates.length,
    reranked: rerun.notes.reranked > 0 && !rerun.notes.rerankSkipped,
    retrievedRank: retrievedIndex + 1,
    topK: plan.topK,
    contextNumber: numbered?.number ?? 0,
    ...(excluded ? { exclusion: { reason: excluded.reason, duplicateOf: excluded.duplicateOf } } : {}),
    contextTokenBudget,
  };
  const { loss, verdict } = judge(facts);
  const p = plan.turn?.provenance;
  const retrieved = retrievedIndex >= 0 ? rerun.hits[retrievedIndex] : undefined;
  const proto = create(ChunkTraceSchema, {
    chunk: {
      chunkId: id,
      documentId: target.chunk.documentId,
      knowledgeBaseId: target.chunk.knowledgeBaseId,
      fileName: target.fileName,
      chunkIndex: target.chunk.index,
      match: target.match,
      enabled: target.enabled && (target.document?.enabled ?? true),
      documentStatus: target.document ? toProtoStatus(target.document.status) : 0,
      snippet: snippet(target.chunk.text, expected),
    },
    lists: searches.flatMap((s) =>
      s.positions.map((pos) => ({
        list: pos.list,
        knowledgeBaseId: pos.knowledgeBaseId,
        query: pos.query,
        window: pos.window,
        rank: pos.rank,
        score: pos.score,
        inWindow: pos.inWindow,
        source: SOURCE_TO_PROTO[pos.source],
        windowLastScore: pos.windowLastScore,
        note: pos.note,
      })),
    ),
    retrievedRank: retrievedIndex + 1,
    rerankCandidateRank: plan.extras.rerank ? candidateIndex + 1 : 0,
    rerankScore: retrieved?.explain.rerankScore,
    contextNumber: numbered?.number ?? 0,
    loss: LOSS_TO_PROTO[loss],
    verdict,
    turnContextNumber: p?.context.find((c) => c.chunkId === id)?.number ?? 0,
    turnFusedRank: p?.fused.find((f) => f.chunkId === id)?.rank ?? 0,
  });
  return { loss, verdict, target, proto };
}

function whyUnsearchable(target: Target, plan: DebugPlan): string {
  const doc = target.document;
  const file = target.fileName || target.chunk.documentId;
  if (target.chunk.disabled) return `the chunk is disabled (a hand correction in ${file}; enable it to search it)`;
  if (!target.enabled || doc?.enabled === false) return `its document ${file} is disabled`;
  if (plan.documentIds.length > 0 && !plan.documentIds.includes(target.chunk.documentId)) return `its document ${file} is outside the document filter`;
  const wanted = Object.entries(plan.metadataEquals ?? {});
  const differs = wanted.filter(([k, v]) => doc?.metadata[k] !== v);
  if (differs.length > 0) return `its document ${file} does not match the metadata filter (${differs.map(([k, v]) => `${k}=${v}`).join(", ")})`;
  return "";
}

const SNIPPET_CHARS = 200;

/** Up to 200 characters of the chunk, around the expected text when it is there as given. */
export function snippet(text: string, expected: string): string {
  if (text.length <= SNIPPET_CHARS) return text;
  const at = expected ? text.indexOf(expected) : -1;
  const start = at < 0 ? 0 : Math.max(0, Math.min(at - 40, text.length - SNIPPET_CHARS));
  return `${start > 0 ? "…" : ""}${text.slice(start, start + SNIPPET_CHARS)}${start + SNIPPET_CHARS < text.length ? "…" : ""}`;
}

function listRankOf(hit: SearchHit, rerun: Rerun): number {
  for (const s of rerun.searches) {
    const i = s.hits.findIndex((h) => h.chunk.id === hit.chunk.id);
    if (i >= 0) return i + 1;
  }
  return 0;
}

const LOSS_TO_PROTO: Record<RetrievalLossKind, RetrievalLoss> = {
  none: RetrievalLoss.NONE,
  "not-in-knowledge-base": RetrievalLoss.NOT_IN_KNOWLEDGE_BASE,
  "not-searchable": RetrievalLoss.NOT_SEARCHABLE,
  "not-retrieved": RetrievalLoss.NOT_RETRIEVED,
  fusion: RetrievalLoss.FUSION,
  "min-score": RetrievalLoss.MIN_SCORE,
  "top-k": RetrievalLoss.TOP_K,
  rerank: RetrievalLoss.RERANK,
  "context-budget": RetrievalLoss.CONTEXT_BUDGET,
  duplicate: RetrievalLoss.DUPLICATE,
};

const SOURCE_TO_PROTO: Record<DomainRankSource, RankSource> = {
  candidates: RankSource.CANDIDATES,
  "deep-search": RankSource.DEEP_SEARCH,
  "direct-score": RankSource.DIRECT_SCORE,
  absent: RankSource.ABSENT,
};
