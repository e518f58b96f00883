// What the colour of a vector score means, per embedding model of the bases searched: each model
// has its own scale, so the bands are its recorded score distribution (eval/model-scores.ts).
import type { KnowledgeBase } from "../../../gen/quarry/common/v1/common_pb.ts";
import { BAND_MEANINGS } from "../format.ts";

export function ScoreLegend({ bases }: { bases: KnowledgeBase[] }) {
  const models = new Map(bases.map((kb) => [kb.embeddingModel, kb.vectorScoreBands]));
  return (
    <dl className="score-legend" aria-label="vector score colours">
      {[...models].map(([model, bands]) => (
        <div key={model} className="legend">
          <dt className="muted small">{model}</dt>
          {bands ? (
            <>
              <dd>
                <span className="score score-high">≥ {bands.relevantMedian.toFixed(3)}</span> {BAND_MEANINGS.high}
              </dd>
              <dd>
                <span className="score score-mid">≥ {bands.bestIrrelevantMedian.toFixed(3)}</span> {BAND_MEANINGS.mid}
              </dd>
              <dd>
                <span className="score score-low">&lt; {bands.bestIrrelevantMedian.toFixed(3)}</span> {BAND_MEANINGS.low}
              </dd>
              <dd className="muted small">medians of this model&apos;s scores on {bands.measuredOn.join(", ")}</dd>
            </>
          ) : (
            <dd className="muted small">no recorded score distribution for this model: its vector scores are shown uncoloured</dd>
          )}
        </div>
      ))}
    </dl>
  );
}
