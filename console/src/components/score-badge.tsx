import { scoreBand } from "../format.ts";

export function ScoreBadge({ score, title }: { score: number; title?: string }) {
  return (
    <span className={`score score-${scoreBand(score)}`} title={title}>
      {score.toFixed(3)}
    </span>
  );
}
