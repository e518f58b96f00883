import type { VectorScoreBands } from "../../../gen/quarry/common/v1/common_pb.ts";
import { BAND_MEANINGS, scoreBand } from "../format.ts";

/**
 * A vector similarity is coloured by its band among the model's recorded scores (bands); any other
 * score (BM25, fused rank), or a similarity of a model never measured, has no known scale and is
 * shown plain.
 */
export function ScoreBadge({ score, bands, title }: { score: number; bands?: VectorScoreBands; title?: string }) {
  const band = scoreBand(score, bands);
  return (
    <span className={`score ${band ? `score-${band}` : "score-plain"}`} title={band ? `${title}: ${BAND_MEANINGS[band]}` : title} data-band={band}>
      {score.toFixed(3)}
    </span>
  );
}
