// What eval/model-scores.ts records of a model and the catalog carries in its manifest.

/** Nearest-rank percentiles of a set of cosine scores. */
export interface ScorePercentiles {
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
}

/**
 * Where the model's cosine scores fall on its evaluation sets (eval/model-scores.ts records them):
 * a question against each passage judged relevant to it, and against the best passage that is not.
 * A cosine means something only against these: each model has its own scale.
 */
export interface ScoreDistribution {
  measuredOn: { set: string; questions: number; passages: number }[];
  relevant: ScorePercentiles;
  bestIrrelevant: ScorePercentiles;
}
