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
  },
  "bge-small-en-v1.5": {
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
      "p10": 0.7,
      "p25": 0.745,
      "p50": 0.788,
      "p75": 0.832,
      "p90": 0.86
    },
    "bestIrrelevant": {
      "p10": 0.667,
      "p25": 0.699,
      "p50": 0.725,
      "p75": 0.758,
      "p90": 0.792
    }
  },
  "bge-small-zh-v1.5": {
    "measuredOn": [
      {
        "set": "cmrc2018-public",
        "questions": 200,
        "passages": 484
      },
      {
        "set": "cmedir-public",
        "questions": 200,
        "passages": 705
      }
    ],
    "relevant": {
      "p10": 0.574,
      "p25": 0.655,
      "p50": 0.718,
      "p75": 0.777,
      "p90": 0.83
    },
    "bestIrrelevant": {
      "p10": 0.437,
      "p25": 0.472,
      "p50": 0.514,
      "p75": 0.564,
      "p90": 0.618
    }
  }
};
