// How sure an interleaved on/off ratio is, from the run's own rounds. The machine's load drifts
// while a bench runs, and a round is the unit the arms share: both measured in it, one after the
// other. Resampling whole rounds with replacement (the same rounds for both arms, so the pairing is
// kept) and recomputing the ratio gives a percentile bootstrap interval: the ratios a rerun with as
// many rounds would likely land within. A few lines, so written here rather than taken from a
// statistics package for one function.
import { seededRandom } from "./synthetic-corpus.ts";

export interface RoundInterval {
  /** The lower and upper ends of the central interval, at `confidence`. */
  low: number;
  high: number;
  confidence: number;
  replicates: number;
}

/**
 * The percentile bootstrap interval of `statistic` over `rounds` rounds: each replicate draws
 * `rounds` round indices with replacement and passes them to `statistic`. Seeded, so a report is
 * reproducible from its figures.
 */
export function roundBootstrap(
  rounds: number,
  statistic: (picked: readonly number[]) => number,
  options: { replicates?: number; confidence?: number; seed?: number } = {},
): RoundInterval {
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError(`a bootstrap needs at least one round, got ${rounds}`);
  const replicates = options.replicates ?? 2000;
  const confidence = options.confidence ?? 0.95;
  const random = seededRandom(options.seed ?? 1);
  const values: number[] = [];
  for (let b = 0; b < replicates; b++) {
    const picked = Array.from({ length: rounds }, () => Math.floor(random() * rounds));
    values.push(statistic(picked));
  }
  values.sort((a, b) => a - b);
  const at = (q: number) => values[Math.min(replicates - 1, Math.max(0, Math.round(q * (replicates - 1))))];
  return { low: at((1 - confidence) / 2), high: at(1 - (1 - confidence) / 2), confidence, replicates };
}
