// Each stage as a bar on the turn's timeline: where it started and how long it took.
import type { StageTiming } from "../../../gen/quarry/answer/v1/answer_pb.ts";

export function StageTimings({ stages, total }: { stages: StageTiming[]; total: number }) {
  const span = Math.max(total, ...stages.map((s) => s.startedAtMs + s.durationMs), 1);
  return (
    <div className="timings" aria-label="timings">
      {stages.map((s, i) => (
        <div key={i} className="timing" title={s.note}>
          <span className="stage">{s.stage}</span>
          <span className="timeline">
            <span className="bar" style={{ left: `${(s.startedAtMs / span) * 100}%`, width: `${Math.max(0.5, (s.durationMs / span) * 100)}%` }} />
          </span>
          <span className="num">{s.durationMs.toFixed(0)} ms</span>
        </div>
      ))}
      <p className="small muted">{total.toFixed(0)} ms in all</p>
    </div>
  );
}
