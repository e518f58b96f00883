import type { SearchHit } from "../../../lib/domain.ts";
import type { ChatMessage, ChatModel, ChatUsage } from "../chat-models/chat-model.ts";
import type { Citation } from "./citation.ts";
import { CitationMapper, type MappedEvent } from "./citation-mapper.ts";
import { verifyCitations, type CitationCheck, type SupportEmbedder } from "./citation-verifier.ts";
import { buildContext, renderContext, type BuiltContext, type ContextChunk } from "./context-builder.ts";
import { correctionExtract } from "./correction-answer.ts";
import { describeParents, readParents } from "./parent-stage.ts";
import { extractiveAnswer, type ExtractiveOptions } from "./extractive-answerer.ts";
import { buildMessages } from "./prompt.ts";
import { abstention, judgeEvidence } from "./evidence-support.ts";
import { retrieveWithOptions, type OptionDeps, type RetrievalNotes, type RetrievalExtras } from "../retrieval/retrieval-options.ts";
import { validateRetrieval, type RetrievalSettings } from "../retrieval/retrieval-stage.ts";
import type { EvidenceRecord, RetrievalSummary, StageName, StageRun, TurnRecord } from "./turn-record.ts";
import { inSpan, startStep } from "../../../lib/tracing/spans.ts";

export interface AnswerSettings {
  retrieval: RetrievalSettings;
  /** Most tokens the numbered context may take in the prompt. */
  contextTokenBudget: number;
  extractive?: ExtractiveOptions;
  /** Rerank, query expansion, neighbours, keyword fill (retrieval-options.ts). */
  options?: RetrievalExtras;
  /** What retrieval searches for when it differs from the question (a conversation's standalone rewrite). */
  retrievalQuery?: string;
  /** The chat model's messages, when not the default prompt (a conversation's history, an assistant's instructions). */
  messagesFor?: (question: string, context: readonly ContextChunk[]) => ChatMessage[];
  /** Whether a hit is a managed correction: one first in the context is answered from (correction-answer.ts). */
  isCorrection?: (hit: SearchHit) => boolean;
}

export interface AnswerDeps extends OptionDeps {
  /** Counts tokens for the context budget. */
  countTokens(text: string): number;
  /** Absent when no language model is configured: the answer is then extractive. */
  chatModel?: ChatModel;
  /** Embeds cited sentences and chunk sentences for citation verification; lexical checks only without it. */
  embedForSupport?: SupportEmbedder;
  signal?: AbortSignal;
}

export type AnswerEvent =
  | { type: "status"; stage: "retrieving" | "generating" }
  | { type: "text"; delta: string }
  | { type: "citation"; citation: Citation }
  | {
      type: "final";
      usage: ChatUsage | null;
      extractive: boolean;
      /** Markers the model wrote for passages that were not in the context, removed from the text. */
      droppedMarkers: number;
      /** One check per marker left in the answer: is its sentence supported by the chunk it cites? */
      citationChecks: CitationCheck[];
      record: TurnRecord;
      /** Whether the evidence supported an answer, and why. */
      evidence: EvidenceRecord;
      retrievalSummary: RetrievalSummary;
      /** Degradation, rerank outcome, the queries searched. */
      notes: RetrievalNotes;
    };

/** The closest passages an abstaining answer lists: at most this many, one per document. */
const CLOSEST_PASSAGES = 3;

/**
 * Answers one question as a sequence of stages — retrieve, build the numbered context, then
 * generate with the chat model (or extract sentences when there is none) — recording each stage in
 * the turn record. Text streams as the model writes it; each citation is yielded no later than the
 * text of the marker that cites it. Query rewriting, HyDE or multi-query, reranking and neighbour
 * expansion run inside retrieval (retrieval-options.ts), each adding its StageRun.
 */
export async function* answer(question: string, deps: AnswerDeps, settings: AnswerSettings): AsyncGenerator<AnswerEvent> {
  yield* answerChecked(validateRetrieval(question, settings.retrieval), deps, settings);
}

/** answer for a question validateRetrieval has accepted (and trimmed) with these settings. */
export async function* answerChecked(text: string, deps: AnswerDeps, settings: AnswerSettings): AsyncGenerator<AnswerEvent> {
  const started = performance.now();
  const record: TurnRecord = {
    question: text,
    knowledgeBaseIds: [...settings.retrieval.knowledgeBaseIds],
    retrieval: settings.retrieval,
    retrievalOptions: settings.options ?? {},
    stages: [],
    hits: [],
    context: [],
    contextTokens: 0,
    markers: { used: [], dropped: [], resolved: 0, unsupported: 0 },
    citationChecks: [],
    model: deps.chatModel?.name ?? "extractive",
    usage: null,
    extractive: !deps.chatModel,
    startedAt: new Date(),
    durationMs: 0,
  };
  async function stage<T>(name: StageName, run: () => Promise<T>, describe: (result: T) => string): Promise<T> {
    const at = performance.now();
    try {
      const result = await run();
      record.stages.push(stageRun(name, started, at, describe(result)));
      return result;
    } catch (err) {
      record.stages.push(stageRun(name, started, at, `failed: ${(err as Error).name}`));
      throw err;
    }
  }

  yield { type: "status", stage: "retrieving" };
  // A conversation's standalone rewrite when there is one; the question otherwise.
  const query = settings.retrievalQuery ?? text;
  const retrieveStarted = performance.now();
  const { hits, notes } = await retrieveWithOptions(query, deps, settings.retrieval, settings.options ?? {}, settings.contextTokenBudget, (name, at, note) =>
    record.stages.push(stageRun(name, started, at, note)),
  ).catch((err: Error) => {
    record.stages.push(stageRun("retrieve", started, retrieveStarted, `failed: ${err.name}`));
    throw err;
  });
  record.retrievalNotes = notes;
  const parents = await readParents(hits, deps, (at, note) => record.stages.push(stageRun("parents", started, at, note)));
  const context = await stage(
    "build-context",
    async () => buildContext(hits, { tokenBudget: settings.contextTokenBudget, countTokens: deps.countTokens, parents }),
    (c) => `${c.chunks.length} chunks${describeParents(c)}, ${c.tokens} tokens`,
  );
  recordRetrieval(record, hits, context);

  // A correction first in the context was matched against the question by its own gate.
  const isCorrection = settings.isCorrection;
  const correctionFirst = !!isCorrection && context.chunks.length > 0 && isCorrection(context.chunks[0].hit);
  const { record: evidence, supportingDocumentIds } = await stage(
    "evidence",
    async () => evidenceRecord(text, context.chunks, query, correctionFirst),
    ({ record: e }) => `${e.answered ? "answered" : "not answered"}: ${e.reason}`,
  );
  record.evidence = evidence;

  yield { type: "status", stage: "generating" };
  let cited: readonly ContextChunk[] = context.chunks;
  let mapper = new CitationMapper(cited);
  let answerText = "";
  /** The mapper's events, with the text they show kept for verification. */
  const shown = (events: MappedEvent[]): MappedEvent[] => {
    for (const e of events) if (e.type === "text") answerText += e.delta;
    return events;
  };
  const generateStarted = performance.now();
  const model = deps.chatModel;
  /** For an extract: the context number of each source as shown ([n] cites context number shownAs[n - 1]). */
  let shownAs: number[] | undefined;
  /** Quoted and generated answers make claims to verify; an abstention lists passages and claims nothing. */
  let claims = true;
  if (!evidence.answered) {
    // Neither the model nor the extract is asked: both would make something fluent of passages
    // that are not about the question. The reader gets that plainly, and the closest passages.
    const closest = closestPassages(context.chunks, evidence.bestChunkId);
    cited = closest.map((chunk, i) => ({ ...chunk, number: i + 1 }));
    mapper = new CitationMapper(cited);
    shownAs = closest.map((chunk) => chunk.number);
    const { text: says, closestLabel } = abstention(text);
    const markers = cited.map((c) => `[${c.number}]`).join(" ");
    yield* shown([...mapper.push(cited.length ? `${says}\n\n${closestLabel} ${markers}` : says), ...mapper.end()]);
    claims = false;
    record.stages.push(stageRun(model ? "generate" : "extract", started, generateStarted, `skipped: the evidence does not answer the question; ${cited.length} closest passages listed`));
  } else if (model) {
    const messages = settings.messagesFor ? settings.messagesFor(text, context.chunks) : buildMessages(text, renderContext(context.chunks));
    const endCall = startStep("chat model call", { "quarry.chat_model": model.name });
    let failure: unknown;
    try {
      for await (const delta of model.stream(messages, { signal: deps.signal, onUsage: (usage) => (record.usage = usage) })) {
        yield* shown(mapper.push(delta));
      }
    } catch (err) {
      failure = err;
      record.stages.push(stageRun("generate", started, generateStarted, `failed: ${(err as Error).name}`));
      throw err;
    } finally {
      // Also when the reader stops early (the generator is returned, not thrown into).
      endCall(failure);
    }
    yield* shown(mapper.end());
    record.stages.push(stageRun("generate", started, generateStarted, `${model.name}, ${mapper.used.length} sources cited`));
  } else {
    const extracted =
      (correctionFirst && correctionExtract(text, context.chunks, (c) => isCorrection!(c.hit))) || extractiveAnswer(text, context.chunks, { openIn: supportingDocumentIds, ...settings.extractive });
    // The extract numbers its sources 1, 2, … in the order it shows them; the record keeps the
    // context's numbers (renumbered back below).
    cited = extracted.sources.map((chunk, i) => ({ ...chunk, number: i + 1 }));
    mapper = new CitationMapper(cited);
    shownAs = extracted.sources.map((chunk) => chunk.number);
    yield* shown([...mapper.push(extracted.text), ...mapper.end()]);
    record.stages.push(stageRun("extract", started, generateStarted, extracted.found ? `${mapper.used.length} sources cited` : "no matching sentence"));
    if (!extracted.found) Object.assign(evidence, { answered: false, reason: `${evidence.reason}; no sentence matches the question` });
  }

  const textOf = new Map(cited.map((c) => [c.number, c.hit.chunk.text]));
  let embedFailure = "";
  const checks = await stage(
    "verify",
    async () =>
      claims
        ? inSpan("citation check", {}, () => verifyCitations(answerText, (n) => textOf.get(n), deps.embedForSupport, (err) => (embedFailure = `; embedding check skipped: ${(err as Error).name}`)))
        : [],
    (c) => `${c.length} citations checked, ${c.filter((x) => !x.supported).length} unsupported${embedFailure}`,
  );
  record.citationChecks = checks;
  record.markers = {
    used: shownAs ? mapper.used.map((n) => shownAs![n - 1]) : mapper.used,
    dropped: mapper.dropped,
    resolved: checks.length,
    unsupported: checks.filter((c) => !c.supported).length,
  };
  record.durationMs = performance.now() - started;
  yield {
    type: "final",
    usage: record.usage,
    extractive: record.extractive,
    droppedMarkers: record.markers.dropped.length,
    citationChecks: checks,
    record,
    evidence,
    retrievalSummary: {
      hitsConsidered: hits.length,
      usedInContext: context.chunks.length,
      topScore: hits.reduce((top, h) => Math.max(top, h.score), 0),
      mode: settings.retrieval.mode,
    },
    notes,
  };
}

function recordRetrieval(record: TurnRecord, hits: SearchHit[], context: BuiltContext): void {
  const numberOf = new Map(context.chunks.flatMap((c) => [c.hit, ...(c.parent?.matched ?? [])].map((hit) => [hit, c.number] as const)));
  const exclusionOf = new Map(context.excluded.map((e) => [e.hit, e]));
  record.hits = hits.map((hit, i) => {
    const exclusion = exclusionOf.get(hit);
    return {
      rank: i + 1,
      chunkId: hit.chunk.id,
      documentId: hit.chunk.documentId,
      knowledgeBaseId: hit.chunk.knowledgeBaseId,
      fileName: hit.fileName,
      score: hit.score,
      explain: hit.explain,
      contextNumber: numberOf.get(hit) ?? 0,
      ...(exclusion ? { excludedReason: exclusion.reason } : {}),
      ...(exclusion?.duplicateOf ? { duplicateOf: exclusion.duplicateOf } : {}),
    };
  });
  record.context = context.chunks.map((c) => ({
    number: c.number,
    chunkId: c.hit.chunk.id,
    documentId: c.hit.chunk.documentId,
    fileName: c.hit.fileName,
    page: c.hit.chunk.page,
    sectionPath: c.hit.chunk.sectionPath,
    tokens: c.tokens,
    ...(c.parent ? { parent: c.parent.block.parent, matchedChunkIds: c.parent.matched.map((h) => h.chunk.id) } : {}),
  }));
  record.contextTokens = context.tokens;
}

function stageRun(stage: StageName, turnStarted: number, at: number, note: string): StageRun {
  return { stage, startedAtMs: at - turnStarted, durationMs: performance.now() - at, note };
}

/** The judgement as recorded; a correction first in the context answers by its own gate. */
function evidenceRecord(question: string, context: readonly ContextChunk[], searched: string, correctionFirst: boolean): { record: EvidenceRecord; supportingDocumentIds: string[] } {
  const judged = judgeEvidence(question, context, searched);
  const { answered, reason, coverage, threshold, questionTerms, missingTerms, supportingDocumentIds } = judged;
  const record = { answered, reason, coverage, threshold, questionTerms, missingTerms, bestChunkId: judged.best?.hit.chunk.id ?? "" };
  return { record: correctionFirst ? { ...record, answered: true, reason: "a managed correction matched the question" } : record, supportingDocumentIds };
}

/** The best passage first, then the next best-ranked chunks of other documents. */
function closestPassages(context: readonly ContextChunk[], bestChunkId: string): ContextChunk[] {
  const best = context.find((c) => c.hit.chunk.id === bestChunkId);
  const ordered = best ? [best, ...context.filter((c) => c !== best)] : [...context];
  const seen = new Set<string>();
  return ordered.filter((c) => !seen.has(c.hit.chunk.documentId) && seen.add(c.hit.chunk.documentId)).slice(0, CLOSEST_PASSAGES);
}
