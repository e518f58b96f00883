import { DocumentStatus, type VectorScoreBands } from "../../gen/quarry/common/v1/common_pb.ts";

export function formatBytes(bytes: number | bigint): string {
  const n = Number(bytes);
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function formatCount(n: number | bigint): string {
  return Number(n).toLocaleString("en");
}

/** "1 chunk", "2,048 chunks". */
export function countOf(n: number | bigint, noun: string): string {
  return `${formatCount(n)} ${Number(n) === 1 ? noun : `${noun}s`}`;
}

/** The pipeline's stages in the words the progress bar shows. */
export const STATUS_LABELS: Record<DocumentStatus, string> = {
  [DocumentStatus.UNSPECIFIED]: "unknown",
  [DocumentStatus.PENDING]: "queued",
  [DocumentStatus.PARSING]: "parsing",
  [DocumentStatus.CHUNKING]: "splitting",
  [DocumentStatus.EMBEDDING]: "vectorizing",
  [DocumentStatus.INDEXING]: "saving",
  [DocumentStatus.READY]: "ready",
  [DocumentStatus.FAILED]: "failed",
};

export function isSettled(status: DocumentStatus): boolean {
  return status === DocumentStatus.READY || status === DocumentStatus.FAILED;
}

/**
 * A vector score's band against its model's recorded distribution (a cosine has a different scale
 * for each model: a fixed 0.8/0.6 painted MiniLM's correct hits red): at or above the median of
 * relevant passages, above the median best irrelevant one, or below that. Undefined without bands.
 */
export function scoreBand(score: number, bands: VectorScoreBands | undefined): "high" | "mid" | "low" | undefined {
  if (!bands) return undefined;
  return score >= bands.relevantMedian ? "high" : score >= bands.bestIrrelevantMedian ? "mid" : "low";
}

/** What each band means for one model, in the words the legend shows. */
export const BAND_MEANINGS = {
  high: "typical of a relevant passage",
  mid: "weak: between the best unrelated passage and a typical relevant one",
  low: "below: unrelated passages usually score this high",
} as const;
