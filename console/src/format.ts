import { DocumentStatus } from "../../gen/quarry/common/v1/common_pb.ts";

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

/** Score bands as the reference systems colour them. */
export function scoreBand(score: number): "high" | "mid" | "low" {
  return score >= 0.8 ? "high" : score >= 0.6 ? "mid" : "low";
}
