// Written by `node --import tsx eval/model-scores.ts --write`; do not edit by hand.
import type { ScoreDistribution } from "./score-distribution.ts";

export const RECORDED_SCORES: Readonly<Record<string, ScoreDistribution>> = {};
