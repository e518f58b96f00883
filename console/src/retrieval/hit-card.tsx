import type { SearchHit, VectorScoreBands } from "../../../gen/quarry/common/v1/common_pb.ts";
import { Highlight } from "../components/highlight.tsx";
import { ScoreBadge } from "../components/score-badge.tsx";

export function HitCard({ hit, rank, terms, bands }: { hit: SearchHit; rank: number; terms: string[]; bands?: VectorScoreBands }) {
  const chunk = hit.chunk!;
  const x = hit.explain;
  return (
    <article className="card hit" aria-label={`result ${rank}`}>
      <header className="hit-head">
        <span className="rank">{rank}</span>
        {x?.vectorRank ? <ScoreBadge score={x.vectorScore} bands={bands} title="vector similarity" /> : <span className="pill">keyword match</span>}
        <span className="file">{hit.fileName}</span>
        {chunk.page > 0 && <span className="pill">page {chunk.page}</span>}
        {chunk.sectionPath.length > 0 && <span className="section-path">{chunk.sectionPath.join(" › ")}</span>}
      </header>
      {x && (
        <dl className="explain" aria-label="explain">
          <div>
            <dt>score</dt>
            <dd>{hit.score.toFixed(4)}</dd>
          </div>
          <div>
            <dt>fused</dt>
            <dd>{x.fusedScore.toFixed(4)}</dd>
          </div>
          {x.vectorWeight !== undefined && (
            <div>
              <dt>convex</dt>
              <dd title="fused = alpha × vector on 0–1 + (1 − alpha) × BM25 on 0–1">
                {`${x.vectorWeight} × ${(x.vectorNormalized ?? 0).toFixed(3)} + ${+(1 - x.vectorWeight).toFixed(6)} × ${(x.bm25Normalized ?? 0).toFixed(3)}`}
              </dd>
            </div>
          )}
          <div>
            <dt>BM25</dt>
            <dd>{x.bm25Rank ? `#${x.bm25Rank} · ${x.bm25Score.toFixed(3)}` : "not in list"}</dd>
          </div>
          <div>
            <dt>vector</dt>
            <dd>{x.vectorRank ? `#${x.vectorRank} · ${x.vectorScore.toFixed(3)}` : "not in list"}</dd>
          </div>
        </dl>
      )}
      <p className="chunk-text">
        <Highlight text={chunk.text} terms={terms} />
      </p>
    </article>
  );
}
