// Asks each query through the Chat RPC, as a user's client would, and keeps what answer metrics
// need: the streamed text, the chunks it cites, the citation checks of the final event, timings.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Chunk } from "../gen/quarry/common/v1/common_pb.ts";
import type { QuarryClient } from "../client/gateway-client.ts";
import type { BeirDocument, BeirQuery } from "./beir-dataset.ts";
import type { AnsweredQuery, TurnTrace } from "./answer-metrics.ts";
import { documentText } from "./run-eval.ts";

export interface AnswerRun {
  /** The answerer as the final event names it: "extractive" or the chat model's name. */
  answerer: string;
  answered: Map<string, AnsweredQuery>;
  /** Queries Quarry refused as invalid (e.g. empty); they count as answers without text. */
  refused: string[];
}

/**
 * The text of a cited chunk, cut from the uploaded document at the citation's offsets (Markdown is
 * parsed to itself, so offsets into the parsed text are offsets into the upload). The snippet is
 * only the chunk's start, so it could miss an answer further in.
 */
export function citedText(citation: { documentId: string; startOffset: number; endOffset: number; snippet: string }, docs: ReadonlyMap<string, BeirDocument>): string {
  const doc = docs.get(citation.documentId);
  return doc ? documentText(doc).slice(citation.startOffset, citation.endOffset) : citation.snippet;
}

export async function runAnswers(
  client: QuarryClient,
  knowledgeBase: string,
  queries: readonly BeirQuery[],
  /** Quarry document id → the corpus document uploaded as it. */
  docs: ReadonlyMap<string, BeirDocument>,
  onProgress?: (done: number, total: number) => void,
  /** Runs around each question: the unanswerable run disables the question's evidence first and restores it after. */
  around: (query: BeirQuery, ask: () => Promise<AnsweredQuery>) => Promise<AnsweredQuery> = (_, ask) => ask(),
): Promise<AnswerRun> {
  let answerer = "";
  const traces = turnTraces(client);
  const ask = async (question: string): Promise<AnsweredQuery> => {
    const started = performance.now();
    const answered: AnsweredQuery = { text: "", citedChunkTexts: [], resolvedMarkers: 0, unsupportedMarkers: 0, answered: true, firstTokenMs: Number.NaN, totalMs: 0 };
    for await (const { event } of client.chat({ question, knowledgeBases: [knowledgeBase] })) {
      const e = event?.event;
      if (e?.case === "started") {
        answered.turnId = e.value.turnId;
      } else if (e?.case === "text" && e.value.text) {
        if (!answered.text) answered.firstTokenMs = performance.now() - started;
        answered.text += e.value.text;
      } else if (e?.case === "citation") {
        answered.citedChunkTexts.push(citedText(e.value, docs));
      } else if (e?.case === "final") {
        answered.resolvedMarkers = e.value.resolvedMarkers;
        answered.unsupportedMarkers = e.value.unsupportedMarkers;
        answered.answered = e.value.answered;
        answered.answeredReason = e.value.answeredReason;
        answered.coverage = e.value.evidence?.coverage;
        answerer = e.value.extractive ? "extractive" : e.value.model;
      }
    }
    answered.totalMs = performance.now() - started;
    // After the clock stops: reading the turn back is the evaluation's cost, not the answer's.
    if (answered.turnId) answered.trace = await traces(answered.turnId);
    return answered;
  };

  // One untimed question first: the first turn loads the segmenter and the model session.
  if (queries.length > 0) await ask(queries[0].text).catch(() => {});
  const answered = new Map<string, AnsweredQuery>();
  const refused: string[] = [];
  for (const [i, query] of queries.entries()) {
    try {
      answered.set(query.id, await around(query, () => ask(query.text)));
    } catch (error) {
      // CMRC 2018 has empty questions; Quarry refuses them, and they score as unanswered.
      if (!(error instanceof ConnectError && error.code === Code.InvalidArgument)) throw error;
      refused.push(query.id);
      answered.set(query.id, { text: "", citedChunkTexts: [], resolvedMarkers: 0, unsupportedMarkers: 0, answered: false, firstTokenMs: Number.NaN, totalMs: Number.NaN });
    }
    onProgress?.(i + 1, queries.length);
  }
  return { answerer, answered, refused };
}

/**
 * One line per question for `--details`: what was asked, whether it was answered and why, whether
 * it held a gold answer, where it failed, and the turn's context as the answerer read it (what
 * `eval/answers-replay.ts` answers again offline).
 */
export function detailLines(
  run: AnswerRun,
  queries: readonly BeirQuery[],
  golds: ReadonlyMap<string, readonly string[]>,
  hit: (text: string, golds: readonly string[]) => boolean,
  kind: string,
  failureOf: (answered: AnsweredQuery, golds: readonly string[]) => string | undefined = () => undefined,
): string {
  return queries
    .filter((q) => run.answered.has(q.id))
    .map((q) => {
      const a = run.answered.get(q.id)!;
      const g = golds.get(q.id) ?? [];
      return JSON.stringify({
        run: kind,
        id: q.id,
        question: q.text,
        answered: a.answered,
        coverage: a.coverage,
        reason: a.answeredReason,
        hit: hit(a.text, g),
        failure: failureOf(a, g) ?? null,
        answer: a.text,
        turn_id: a.turnId,
        cited: a.citedChunkTexts,
        context: a.trace?.context,
      });
    })
    .join("\n");
}

/**
 * Reads a stored turn back as texts: every candidate chunk retrieval returned and the numbered
 * context with what the answerer read of each entry (its title, its place in its document, the
 * ranks the lists gave it). Chunk texts come from the document's chunk list, read once per document.
 */
export function turnTraces(client: QuarryClient): (turnId: string) => Promise<TurnTrace | undefined> {
  const chunksOf = new Map<string, Promise<Map<string, Chunk>>>();
  const chunk = async (documentId: string, chunkId: string): Promise<Chunk | undefined> => {
    let chunks = chunksOf.get(documentId);
    if (!chunks) {
      chunks = client.listDocumentChunks({ documentId }).then((r) => new Map(r.chunks.map((c) => [c.id, c])));
      chunksOf.set(documentId, chunks);
    }
    return (await chunks).get(chunkId);
  };
  return async (turnId) => {
    const provenance = (await client.getTurn({ turnId })).turn?.provenance;
    if (!provenance) return undefined;
    const candidates = new Map(provenance.lists.flatMap((list) => list.hits.map((hit) => [hit.chunkId, hit] as const)));
    const retrievedTexts: string[] = [];
    for (const hit of candidates.values()) {
      const found = await chunk(hit.documentId, hit.chunkId);
      if (found) retrievedTexts.push(found.text);
    }
    const context: TurnTrace["context"] = [];
    for (const entry of provenance.context) {
      const found = await chunk(entry.documentId, entry.chunkId);
      if (!found) continue;
      const explain = candidates.get(entry.chunkId)?.explain;
      context.push({
        number: entry.number,
        chunkId: entry.chunkId,
        documentId: entry.documentId,
        fileName: entry.fileName,
        sectionPath: [...entry.sectionPath],
        index: found.index,
        start: found.startOffset,
        text: found.text,
        bm25Rank: explain?.bm25Rank ?? 0,
        vectorRank: explain?.vectorRank ?? 0,
      });
    }
    return { retrievedTexts, context };
  };
}
