// A source's last sync as the table shows it: when, how long, the counts, the errors with reasons
// (or why the whole sync failed), or that it is running now.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { SourceSyncState, type SourceSync } from "../../../gen/quarry/common/v1/source_pb.ts";
import { formatDuration, formatWhen } from "./schedule.ts";

const COUNTS = ["added", "changed", "removed", "moved", "unchanged", "failed"] as const;

export function LastSync({ sync, syncing }: { sync: SourceSync | undefined; syncing: boolean }) {
  // Asked for here but not yet recorded as running, the row still holds the previous sync: "syncing…" until the poll brings the new one.
  if (syncing) {
    return (
      <div className="sync-state running" data-testid="sync-state">
        syncing{sync?.startedAt && sync.state === SourceSyncState.RUNNING ? ` since ${formatWhen(sync.startedAt)}` : "…"}
      </div>
    );
  }
  if (!sync?.startedAt) return <div className="muted" data-testid="sync-state">never synced</div>;
  const took = sync.finishedAt ? timestampDate(sync.finishedAt).getTime() - timestampDate(sync.startedAt).getTime() : undefined;
  const failed = sync.state === SourceSyncState.FAILED;
  return (
    <div className="last-sync">
      <div className={`sync-state ${failed ? "failed" : "done"}`} data-testid="sync-state">
        {failed ? "failed" : "done"} {formatWhen(sync.startedAt)}
        {took !== undefined && <span className="muted"> · took {formatDuration(took)}</span>}
      </div>
      {failed ? (
        <div className="error small">{sync.error}</div>
      ) : (
        <div className="sync-counts" data-testid="sync-counts">
          {COUNTS.map((c) => (
            <span key={c} className={sync[c] > 0 ? `count count-${c}` : "count muted"}>
              {c} {sync[c]}
            </span>
          ))}
        </div>
      )}
      {sync.errors.length > 0 && (
        <ul className="sync-errors" aria-label="Items that failed">
          {sync.errors.map((e) => (
            <li key={e.item} className="small">
              <code>{e.item}</code>: <span className="error">{e.reason}</span>
            </li>
          ))}
          {sync.failed > sync.errors.length && <li className="muted small">and {sync.failed - sync.errors.length} more</li>}
        </ul>
      )}
    </div>
  );
}
