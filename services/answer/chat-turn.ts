// One turn of a conversation: find the conversation (or start one) and the assistant or knowledge
// bases it is held with, announce where the turn will be stored, rewrite a follow-up into a
// standalone question when a chat model can, answer (answer-pipeline.ts) with the history and the
// assistant's instructions, then store the turn with its provenance. The conversation store is
// reached through ConversationPort, so this module knows no transport.
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { QueryRewrite, TurnSchema, type Turn } from "../../gen/quarry/answer/v1/answer_pb.ts";
import type { Assistant, Conversation } from "../../gen/quarry/common/v1/assistant_pb.ts";
import { CitationSchema, type Citation as CitationProto } from "../../gen/quarry/common/v1/common_pb.ts";
import type { FusionRule, KnowledgeBase, RetrievalMode, SearchHit } from "../../lib/domain.ts";
import { InvalidInputError } from "../../lib/errors.ts";
import { chunkParentToProto, fusionFromProto, modeFromProto } from "../../lib/proto-convert.ts";
import { answerChecked, type AnswerDeps, type AnswerEvent } from "./answering/answer-pipeline.ts";
import type { Citation } from "./answering/citation.ts";
import { conversationMessages, historyMessages } from "./conversation/conversation-prompt.ts";
import { rewriteFollowUp, withPreviousTerms } from "./conversation/follow-up-rewriter.ts";
import { FUSION_RULE, retrieveMounted, type CandidateList, type Mount } from "./retrieval/mounted-retrieval.ts";
import { expansionOf } from "./retrieval/query-rewrite-mode.ts";
import type { RetrievalExtras } from "./retrieval/retrieval-options.ts";
import { retrieve, validateQuestion, type QueryEmbedding, type RetrievalDeps, type RetrievalSettings } from "./retrieval/retrieval-stage.ts";
import type { StageRun } from "./answering/turn-record.ts";
import { turnProvenance } from "./conversation/turn-provenance.ts";
import { correctionsMount, openWithCorrections } from "./retrieval/corrections-recall.ts";
import { activeTraceId } from "../../lib/tracing/spans.ts";

export interface ConversationPort {
  /** By id or name; NotFoundError when there is none. */
  getAssistant(idOrName: string): Promise<Assistant>;
  /** With its last `lastTurns` turns, oldest first; NotFoundError when there is none. */
  getConversation(id: string, lastTurns: number): Promise<{ conversation: Conversation; turns: Turn[] }>;
  createConversation(input: { title: string; assistantId: string; knowledgeBaseIds: string[] }): Promise<Conversation>;
  saveTurn(turn: Turn): Promise<Turn>;
}

export interface ChatTurnDeps extends Omit<AnswerDeps, keyof RetrievalDeps | "retrieveFor"> {
  port: ConversationPort;
  /** Looks the knowledge bases up (ids or names, in order; NotFoundError for a missing one) and readies their search for this query. */
  open(query: string, mode: RetrievalMode, knowledgeBases: string[]): Promise<{ knowledgeBases: KnowledgeBase[]; deps: RetrievalDeps }>;
  contextTokenBudget: number;
  maxQuestionChars: number;
  /** Earlier rounds (question and answer) given to the chat model and the rewrite. */
  historyRounds: number;
  /** Reports a turn that could not be stored; the answer has been streamed already. */
  onSaveFailure?: (error: unknown) => void;
}

export interface ChatTurnRequest {
  question: string;
  /** Ids or names; not with an assistant. */
  knowledgeBases: string[];
  /** An id or a name; empty: none. */
  assistant: string;
  /** Empty: a new conversation. */
  conversationId: string;
  /** Earlier rounds the caller holds (not with conversationId): read as a stored conversation's turns. */
  history?: { question: string; answer: string }[];
  /** Asked once: no conversation is made and no turn kept (ignored with a conversationId). */
  oneOff?: boolean;
  /** Overrides of the assistant's defaults; unset fields are undefined or 0. */
  settings: { mode?: RetrievalMode; topK: number; minScore: number; documentIds: string[]; metadataEquals?: Record<string, string>; fusion?: FusionRule };
  /** Rerank, query expansion, neighbours, keyword fill (retrieval-options.ts). */
  options?: RetrievalExtras;
}

export type ChatTurnEvent =
  | { type: "started"; conversationId: string; turnId: string; traceId: string }
  | Exclude<AnswerEvent, { type: "final" }>
  | (Extract<AnswerEvent, { type: "final" }> & { retrievalQuery: string; rewrite: QueryRewrite; correctionsUsed: string[] });

const DEFAULT_TOP_K = 8;

export async function* chatTurn(request: ChatTurnRequest, deps: ChatTurnDeps): AsyncGenerator<ChatTurnEvent> {
  const started = performance.now();
  const question = validateQuestion(request.question, { maxQuestionChars: deps.maxQuestionChars });
  if (request.history?.length && request.conversationId.trim()) {
    throw new InvalidInputError("send either a conversation id (Quarry holds the history) or the history itself, not both");
  }
  // One earlier turn at least: whether the question is a follow-up decides the rewrite.
  const held = request.conversationId.trim() ? await deps.port.getConversation(request.conversationId.trim(), Math.max(1, deps.historyRounds)) : undefined;
  const scope = await resolveScope(request, held?.conversation, deps.port);
  const mode = request.settings.mode ?? (scope.assistant?.retrieval?.mode ? modeFromProto(scope.assistant.retrieval.mode) : "hybrid");
  // The assistant's managed corrections: a base of their own, searched beside its mounts.
  const open = (query: string) => openWithCorrections(deps.open, query, mode, scope.names, scope.assistant?.correctionsKnowledgeBaseId ?? "");

  // A new conversation is stored only once its bases are known to exist; a follow-up's bases are
  // looked up for the query it is rewritten into.
  let opened = held ? undefined : await open(question);
  const keep = Boolean(held) || !request.oneOff;
  const conversation =
    held?.conversation ??
    (keep
      ? await deps.port.createConversation({ title: question, assistantId: scope.assistant?.id ?? "", knowledgeBaseIds: opened!.knowledgeBases.map((kb) => kb.id) })
      : { id: "" });
  const turnId = keep ? `tn_${randomBytes(10).toString("hex")}` : "";
  yield { type: "started", conversationId: conversation.id, turnId, traceId: activeTraceId() };

  const earlier = held ? held.turns.map((t) => ({ question: t.question, answer: t.answer })) : (request.history ?? []);
  const history = historyMessages(earlier, deps.historyRounds);
  const stages: StageRun[] = [];
  let retrievalQuery = question;
  let rewrite = QueryRewrite.FIRST_TURN;
  let rewriteNote = "the first turn: searched as asked";
  if (earlier.length > 0 && deps.historyRounds <= 0) {
    rewrite = QueryRewrite.FAILED;
    rewriteNote = "history is off (QUARRY_CHAT_HISTORY_ROUNDS=0): searched as asked";
  } else if (earlier.length > 0 && !deps.chatModel) {
    // No model to resolve "it" and "who": the previous question's words say what the conversation
    // is about, so they are searched with the follow-up's.
    const previous = earlier.at(-1)!;
    const carried = withPreviousTerms(previous.question, question);
    if (carried.terms.length > 0) {
      retrievalQuery = carried.query;
      rewrite = QueryRewrite.PREVIOUS_TERMS;
      rewriteNote = `no chat model: searched with the previous question's words (${carried.terms.join(", ")}) and the follow-up`;
    } else {
      rewrite = QueryRewrite.NO_MODEL;
      rewriteNote = "no chat model is configured to rewrite a follow-up, and the previous question has no content words: searched as asked";
    }
  } else if (earlier.length > 0 && deps.chatModel) {
    const at = performance.now();
    try {
      const outcome = await rewriteFollowUp(deps.chatModel, history, question, { maxChars: deps.maxQuestionChars, signal: deps.signal });
      rewriteNote = outcome.note;
      if (outcome.query) {
        retrievalQuery = outcome.query;
        rewrite = QueryRewrite.REWRITTEN;
      } else rewrite = QueryRewrite.FAILED;
    } catch (error) {
      if (deps.signal?.aborted) throw error;
      rewrite = QueryRewrite.FAILED;
      rewriteNote = `the rewrite failed (${(error as Error).name}: ${(error as Error).message}); searched as asked`;
    }
    stages.push({ stage: "rewrite", startedAtMs: at - started, durationMs: performance.now() - at, note: rewriteNote });
  }

  opened ??= await open(retrievalQuery);
  const corrections = opened.corrections;
  if (opened.correctionsSkipped) stages.push({ stage: "corrections", startedAtMs: performance.now() - started, durationMs: 0, note: opened.correctionsSkipped });
  const kbs = opened.knowledgeBases;
  if (held && !scope.assistant && !sameSet(kbs.map((kb) => kb.id), held.conversation.knowledgeBaseIds)) {
    throw new InvalidInputError(`conversation ${held.conversation.id} is held over other knowledge bases; send none, or start a new conversation`);
  }
  const settings = retrievalSettings(scope, kbs, mode, request.settings, deps.maxQuestionChars);
  const retrievalDeps = memoisedEmbedding(opened.deps);
  const mounts: Mount[] | undefined = scope.mounts?.map((m, i) => ({ ...m, knowledgeBaseId: kbs[i].id }));
  if (mounts && corrections) {
    mounts.push(correctionsMount(corrections, retrievalDeps));
    settings.embeddingModels = { ...settings.embeddingModels, [corrections.id]: corrections.embeddingModel };
  }
  // Only matching corrections survive the fusion, so a hit of the corrections base is one.
  const isCorrection = (hit: SearchHit) => hit.chunk.knowledgeBaseId === corrections?.id;
  let lists: CandidateList[] = [];
  let listRank = new Map<string, number>();
  // Called by the retrieval options once per search they run (a fallback or a variant calls it
  // again), so the provenance keeps the lists of the last one.
  const retrieveFor = async (query: string, searchDeps: RetrievalDeps, searchSettings: RetrievalSettings) => {
    if (mounts) {
      const fused = await retrieveMounted(query, searchDeps, mounts, searchSettings);
      lists = fused.lists;
      listRank = fused.listRank;
      return fused;
    }
    const run = await retrieve(query, searchDeps, searchSettings);
    // One search over every named base: the list is that base's, or "" for several together.
    lists = [{ ...run, knowledgeBaseId: settings.knowledgeBaseIds.length === 1 ? settings.knowledgeBaseIds[0] : "", priority: 0, topK: settings.topK }];
    listRank = new Map(run.hits.map((h, i) => [h.chunk.id, i + 1]));
    return run;
  };
  const hideFileNames = scope.assistant?.hideFileNames ?? false;
  const baseNames = new Map([...kbs, ...(corrections ? [corrections] : [])].map((kb) => [kb.id, kb.name]));

  let text = "";
  const citations: Citation[] = [];
  const turn = create(TurnSchema, { id: turnId, conversationId: conversation.id, question, createdAt: timestampFromDate(new Date()) });
  const provenanceBase = {
    assistantId: scope.assistant?.id ?? "",
    knowledgeBaseIds: kbs.map((kb) => kb.id),
    retrievalQuery,
    rewrite,
    rewriteNote,
    historyTurns: Math.min(earlier.length, Math.max(0, deps.historyRounds)),
    settings,
    rewriteMode: scope.assistant?.retrieval?.rewrite ?? 0,
    rerank: scope.assistant?.retrieval?.rerank ?? false,
    hideFileNames,
    fusionRule: mounts ? FUSION_RULE : "one search over the named knowledge bases",
    correctionsBaseId: corrections?.id,
    options: retrievalExtras(scope, request.options),
    traceId: activeTraceId(),
  };
  try {
    const events = answerChecked(
      question,
      { ...retrievalDeps, ...deps, retrieveFor, keepFirst: corrections ? isCorrection : undefined },
      {
        retrieval: settings,
        contextTokenBudget: deps.contextTokenBudget,
        retrievalQuery,
        options: retrievalExtras(scope, request.options),
        messagesFor: (q, chunks) =>
          conversationMessages(q, chunks, { systemPrompt: scope.assistant?.systemPrompt ?? "", history, hideFileNames, baseNames, correctionBases: new Set(corrections ? [corrections.id] : []) }),
        isCorrection: corrections ? isCorrection : undefined,
      },
    );
    for await (const event of events) {
      if (event.type === "text") text += event.delta;
      if (event.type === "citation") citations.push(event.citation);
      if (event.type !== "final") {
        yield event;
        continue;
      }
      event.record.stages.unshift(...stages);
      turn.answer = text;
      turn.citations = citations.map(citationToProto);
      turn.provenance = turnProvenance({ ...provenanceBase, record: event.record, lists, listRank, durationMs: performance.now() - started });
      await save(turn, deps);
      yield { ...event, retrievalQuery, rewrite, correctionsUsed: turn.provenance.correctionsUsed };
    }
  } catch (error) {
    // A turn that failed is kept too, with what it got to and why it stopped.
    turn.answer = text;
    turn.provenance = turnProvenance({ ...provenanceBase, lists, listRank, durationMs: performance.now() - started, error });
    await save(turn, deps);
    throw error;
  }
}

async function save(turn: Turn, deps: ChatTurnDeps): Promise<void> {
  // A one-off question's turn belongs to no conversation and is not kept.
  if (!turn.id) return;
  try {
    await deps.port.saveTurn(turn);
  } catch (error) {
    deps.onSaveFailure?.(error);
  }
}

interface Scope {
  assistant?: Assistant;
  /** The bases to search, ids or names, in mount order for an assistant. */
  names: string[];
  /** Set for an assistant, aligned with names: each base searched on its own. */
  mounts?: { topK: number; priority: number }[];
}

/** The assistant or bases the turn searches: the conversation's, or the request's for a new one. */
async function resolveScope(request: ChatTurnRequest, conversation: Conversation | undefined, port: ConversationPort): Promise<Scope> {
  const named = request.knowledgeBases.map((k) => k.trim()).filter(Boolean);
  const assistantName = request.assistant.trim();
  if (assistantName && named.length > 0) throw new InvalidInputError("ask an assistant or name knowledge bases, not both");
  if (conversation) {
    if (conversation.assistantId && named.length > 0) {
      throw new InvalidInputError(`conversation ${conversation.id} is held with an assistant; send no knowledge bases, or start a new conversation`);
    }
    if (!conversation.assistantId && assistantName) {
      throw new InvalidInputError(`conversation ${conversation.id} is held over knowledge bases, not an assistant; start a new conversation to ask one`);
    }
  }
  const assistantRef = conversation ? conversation.assistantId : assistantName;
  if (assistantRef) {
    const assistant = await port.getAssistant(assistantRef);
    if (conversation && assistantName && assistantName !== assistant.id && assistantName !== assistant.name) {
      throw new InvalidInputError(`conversation ${conversation.id} is held with the assistant ${assistant.name}, not ${assistantName}`);
    }
    if (assistant.knowledgeBases.length === 0) throw new InvalidInputError(`the assistant ${assistant.name} mounts no knowledge base`);
    return { assistant, names: assistant.knowledgeBases.map((m) => m.knowledgeBase), mounts: assistant.knowledgeBases.map((m) => ({ topK: m.topK, priority: m.priority })) };
  }
  const names = conversation && named.length === 0 ? conversation.knowledgeBaseIds : named;
  if (names.length === 0) throw new InvalidInputError("choose at least one knowledge base, or an assistant");
  return { names };
}

/** The assistant's defaults, overridden by what the request sets. */
function retrievalSettings(scope: Scope, kbs: KnowledgeBase[], mode: RetrievalMode, overrides: ChatTurnRequest["settings"], maxQuestionChars: number): RetrievalSettings {
  const defaults = scope.assistant?.retrieval;
  return {
    knowledgeBaseIds: kbs.map((kb) => kb.id),
    mode,
    topK: overrides.topK || defaults?.topK || DEFAULT_TOP_K,
    minScore: overrides.minScore || defaults?.minScore || 0,
    documentIds: [...overrides.documentIds],
    metadataEquals: overrides.metadataEquals,
    ...(overrides.fusion ? { fusion: overrides.fusion } : defaults?.fusion ? { fusion: fusionFromProto(defaults.fusion, defaults.convexAlpha) } : {}),
    maxQuestionChars,
    embeddingModels: Object.fromEntries(kbs.map((kb) => [kb.id, kb.embeddingModel])),
  };
}

/** The request's retrieval options over the assistant's defaults (rerank, query expansion). */
function retrievalExtras(scope: Scope, requested: RetrievalExtras | undefined): RetrievalExtras {
  const defaults = scope.assistant?.retrieval;
  return {
    ...requested,
    rerank: requested?.rerank || (defaults?.rerank ?? false),
    queryExpansion: requested?.queryExpansion ?? expansionOf(defaults?.rewrite),
  };
}

/** Several bases of one model need the question's vector once, not once per base. */
function memoisedEmbedding(deps: RetrievalDeps): RetrievalDeps {
  const cache = new Map<string, Promise<QueryEmbedding>>();
  return {
    ...deps,
    embed(question, model) {
      const key = `${model ?? ""}\0${question}`;
      let vector = cache.get(key);
      if (!vector) {
        vector = deps.embed(question, model);
        vector.catch(() => cache.delete(key));
        cache.set(key, vector);
      }
      return vector;
    },
  };
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === new Set(b).size && a.every((x) => b.includes(x));
}

export function citationToProto(c: Citation): CitationProto {
  return create(CitationSchema, {
    marker: c.marker,
    chunkId: c.chunkId,
    documentId: c.documentId,
    fileName: c.fileName,
    page: c.page,
    pageEnd: c.pageEnd,
    sectionPath: c.sectionPath,
    startOffset: c.start,
    endOffset: c.end,
    snippet: c.snippet,
    score: c.score,
    ...(c.parent ? { parent: chunkParentToProto(c.parent) } : {}),
  });
}
