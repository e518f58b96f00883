// Answers the contexts of an earlier `quarry eval-answers --details` run again, offline, with the
// evidence gate and the extractive answerer as they are now: a change to either is measured on
// thousands of questions in seconds instead of an hour of retrieval. Retrieval is the recorded one
// (the context each turn read, in its order, with the ranks its lists gave it); what a replay
// cannot show is a change to retrieval or to the context's budget.
//
//   npx tsx eval/answers-replay.ts --dataset ../shared/eval/cmrc2018-public --details dev.jsonl
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { extractiveAnswer, judgeEvidence, EXTRACTIVE_NOTICES, type ContextChunk } from "../services/answer/index.ts";
import { summarizeAnswers, type AnsweredQuery, type TurnTrace } from "./answer-metrics.ts";
import { countFailures, failureOfAnswer, type FailureKind } from "./answer-failures.ts";
import { readAnswers } from "./beir-dataset.ts";

interface DetailLine {
  run: "answerable" | "unanswerable";
  id: string;
  question: string;
  failure: FailureKind | null;
  context?: TurnTrace["context"];
}

/** The recorded context as the answerer's entries. */
export function contextChunks(entries: TurnTrace["context"]): ContextChunk[] {
  return entries.map((e) => ({
    number: e.number,
    tokens: 0,
    hit: {
      fileName: e.fileName,
      score: 0,
      explain: { bm25Rank: e.bm25Rank, bm25Score: 0, vectorRank: e.vectorRank, vectorScore: 0, fusedScore: 0 },
      chunk: {
        id: e.chunkId,
        documentId: e.documentId,
        knowledgeBaseId: "",
        index: e.index,
        text: e.text,
        tokenCount: 0,
        page: 0,
        pageEnd: 0,
        sectionPath: e.sectionPath,
        start: e.start,
        end: e.start + e.text.length,
      },
    },
  }));
}

/** One question answered again: the gate, then (when it lets the question through) the extract. */
export function replayQuestion(question: string, context: readonly ContextChunk[]): AnsweredQuery {
  const evidence = judgeEvidence(question, context);
  const base = { resolvedMarkers: 0, unsupportedMarkers: 0, firstTokenMs: Number.NaN, totalMs: Number.NaN, coverage: evidence.coverage, answeredReason: evidence.reason };
  if (!evidence.answered) return { ...base, text: "", citedChunkTexts: [], answered: false };
  const extract = extractiveAnswer(question, context, { openIn: evidence.supportingDocumentIds });
  return { ...base, text: extract.text, citedChunkTexts: extract.sources.map((s) => s.hit.chunk.text), answered: extract.found };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dataset: { type: "string" }, details: { type: "string" }, failures: { type: "string" } } });
  if (!values.dataset || !values.details) throw new Error("usage: answers-replay.ts --dataset DIR --details FILE [--failures KIND]");
  if (!existsSync(resolve(values.dataset))) {
    process.stderr.write(`*** SKIPPED: answers-replay.ts did not run: ${values.dataset} is not there (the shared material beside the clone, ../shared; pass --dataset DIR) ***\n`);
    process.exitCode = 1;
    return;
  }
  const golds = await readAnswers(resolve(values.dataset));
  const lines = (await readFile(resolve(values.details), "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l) as DetailLine);
  for (const run of ["answerable", "unanswerable"] as const) {
    const asked = lines.filter((l) => l.run === run && l.context);
    if (asked.length === 0) continue;
    const results = asked.map((l) => ({ line: l, answered: replayQuestion(l.question, contextChunks(l.context!)), golds: golds.get(l.id) ?? [] }));
    const metrics = summarizeAnswers(results, EXTRACTIVE_NOTICES);
    if (run === "unanswerable") {
      console.log(JSON.stringify({ run, questions: asked.length, abstain_rate: round(metrics.abstainRate) }));
      continue;
    }
    // Retrieval's and the context's failures are the recorded ones: a replay reads the same context.
    const kindOf = (r: (typeof results)[number]): FailureKind | undefined =>
      r.line.failure === "not_retrieved" || r.line.failure === "not_in_context"
        ? r.line.failure
        : failureOfAnswer({ ...r.answered, trace: { retrievedTexts: [], context: r.line.context! } }, r.golds, EXTRACTIVE_NOTICES);
    const kinds = results.map(kindOf);
    console.log(
      JSON.stringify({
        run,
        questions: asked.length,
        answer_hit_rate: round(metrics.answerHitRate),
        median_answer_chars: metrics.medianAnswerChars,
        citation_hit_rate: round(metrics.citationHitRate),
        false_abstain_rate: round(metrics.abstainRate),
        failures: countFailures(kinds),
      }),
    );
    if (values.failures) {
      for (const [i, r] of results.entries()) {
        if (kinds[i] === values.failures) console.log(JSON.stringify({ id: r.line.id, question: r.line.question, golds: r.golds, answer: r.answered.text, reason: r.answered.answeredReason }));
      }
    }
  }
}

const round = (n: number) => Math.round(n * 10000) / 10000;

if (import.meta.url === `file://${process.argv[1]}`) await main();
