// Written by `node --import tsx eval/model-scores.ts --write`; do not edit by hand.
// Sample: 200 questions and 300 distractor passages a set.
import type { ScoreDistribution } from "./score-distribution.ts";

export const RECORDED_SCORES: Readonly<Record<string, ScoreDistribution>> = {
  "all-MiniLM-L6-v2-int8": {
    "measuredOn": [
      {
        "set": "scifact",
        "questions": 200,
        "passages": 499
      },
      {
        "set": "arguana-public",
        "questions": 200,
        "passages": 500
      }
    ],
    "relevant": {
      "p10": 0.418,
      "p25": 0.533,
      "p50": 0.658,
      "p75": 0.731,
      "p90": 0.782
    },
    "bestIrrelevant": {
      "p10": 0.369,
      "p25": 0.438,
      "p50": 0.53,
      "p75": 0.63,
      "p90": 0.714
    }
  }
};
