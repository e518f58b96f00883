// Where a model's cosine scores fall: for each question, its cosine with every passage judged
// relevant to it, and its best cosine with a passage that is not. A raw cosine means nothing across
// models (MiniLM's relevant passages sit near 0.5, bge's near 0.75), so the console's score bands
// are read from these figures, recorded per model (eval/model-scores.ts).
import { createHash } from "node:crypto";
import type { ScoreDistribution, ScorePercentiles } from "../lib/models/model-catalog.ts";
import type { Qrels } from "./beir-dataset.ts";
import { percentile } from "./metrics.ts";

/** One question's scores: against each relevant passage, and the best against any other. */
export interface QuestionScores {
  relevant: number[];
  bestIrrelevant: number;
}

/** A stable pseudo-random order (by a hash of each id), so a sample is the same on every run. */
export function sampleByHash<T>(items: readonly T[], idOf: (item: T) => string, n: number): T[] {
  const key = (item: T) => createHash("sha256").update(idOf(item)).digest("hex");
  return items
    .map((item) => ({ item, key: key(item) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, n)
    .map(({ item }) => item);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

/**
 * Each question's scores against a pool of passages (vectors L2-normalised, so the dot product is
 * the cosine). A passage with the question's own id is skipped: in ArguAna the question is an
 * argument of the corpus itself (BEIR's ignore_identical_ids).
 */
export function questionScores(
  questions: readonly { id: string; vector: Float32Array }[],
  passages: readonly { id: string; vector: Float32Array }[],
  qrels: Qrels,
): QuestionScores[] {
  return questions.map((question) => {
    const judged = qrels.get(question.id) ?? new Map<string, number>();
    const relevant: number[] = [];
    let bestIrrelevant = -Infinity;
    for (const passage of passages) {
      if (passage.id === question.id) continue;
      const score = dot(question.vector, passage.vector);
      if (judged.has(passage.id)) relevant.push(score);
      else bestIrrelevant = Math.max(bestIrrelevant, score);
    }
    return { relevant, bestIrrelevant };
  });
}

function percentiles(values: readonly number[]): ScorePercentiles {
  // Three decimals: the bands compare a score shown with three.
  const at = (p: number) => Math.round(percentile(values, p) * 1000) / 1000;
  return { p10: at(10), p25: at(25), p50: at(50), p75: at(75), p90: at(90) };
}

/** The distribution of several sets' scores pooled; questions without a relevant passage in the pool count for nothing. */
export function scoreDistribution(sets: readonly { name: string; documents: number; scores: readonly QuestionScores[] }[]): ScoreDistribution {
  const counted = sets.map((set) => ({ ...set, scores: set.scores.filter((s) => s.relevant.length > 0 && Number.isFinite(s.bestIrrelevant)) }));
  const all = counted.flatMap((set) => set.scores);
  return {
    measuredOn: counted.map((set) => ({ set: set.name, questions: set.scores.length, passages: set.documents })),
    relevant: percentiles(all.flatMap((s) => s.relevant)),
    bestIrrelevant: percentiles(all.map((s) => s.bestIrrelevant)),
  };
}
