// Latency summaries. Percentiles use the nearest-rank definition (the smallest sample with at least
// p% of the samples at or below it): every reported figure is a latency that was actually observed,
// and small hand-computed cases are unambiguous.

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of samples (any order); p in (0, 100]. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError("percentile of no samples");
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[rank - 1];
}

export function summarize(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) throw new RangeError("summary of no samples");
  return {
    count: samples.length,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    p99: percentile(samples, 99),
    mean: samples.reduce((sum, x) => sum + x, 0) / samples.length,
    max: Math.max(...samples),
  };
}

/** a / b rounded for reports; NaN when b is 0 so a missing baseline is never mistaken for a ratio. */
export function ratio(a: number, b: number): number {
  return b === 0 ? Number.NaN : Math.round((a / b) * 1000) / 1000;
}
