import { scoreBand } from "../format.ts";

/**
 * A similarity (cosine, 0..1) is coloured by band as the reference systems do; any other score
 * (BM25, fused rank) has no fixed scale, so it is shown plain.
 */
export function ScoreBadge({ score, similarity, title }: { score: number; similarity?: boolean; title?: string }) {
  return (
    <span className={`score ${similarity ? `score-${scoreBand(score)}` : "score-plain"}`} title={title}>
      {score.toFixed(3)}
    </span>
  );
}
