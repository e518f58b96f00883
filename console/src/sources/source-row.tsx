// One source in the table: kind, where, tags, schedule, last sync, next run, and (for an editor)
// Sync now and Remove. Removing asks once more in place and says whether the documents go too.
import { useState } from "react";
import type { Source } from "../../../gen/quarry/common/v1/source_pb.ts";
import { countOf } from "../format.ts";
import { LastSync } from "./last-sync.tsx";
import { describeEvery, formatWhen } from "./schedule.ts";
import { kindLabel, whereOf } from "./source-kinds.tsx";

export interface SourceActions {
  syncNow: () => Promise<string | undefined>;
  remove: (deleteDocuments: boolean) => Promise<string | undefined>;
}

/** `actions`: absent for a reader. `documents`: how many documents of the base came from this source. */
export function SourceRow({ source, syncing, documents, actions }: { source: Source; syncing: boolean; documents: number; actions?: SourceActions }) {
  const [error, setError] = useState<string>();
  const tags = Object.entries(source.tags);
  return (
    <tr aria-label={source.name} data-syncing={syncing ? "yes" : "no"}>
      <td>
        <strong>{source.name}</strong>
        <div className="muted small">{kindLabel(source)}</div>
      </td>
      <td className="source-where" data-label="Where">{whereOf(source)}</td>
      <td data-label="Tags">
        {tags.length === 0 ? <span className="muted">—</span> : tags.map(([k, v]) => <span key={k} className="tag">{`${k}=${v}`}</span>)}
      </td>
      <td data-label="Schedule">
        {describeEvery(source.intervalSeconds)}
        {source.nextSyncAt && <div className="muted small">next {formatWhen(source.nextSyncAt)}</div>}
      </td>
      <td data-label="Last sync">
        <LastSync sync={source.lastSync} syncing={syncing} />
        {error && (
          <p className="error small" role="alert">
            {error}
          </p>
        )}
      </td>
      {actions && (
        <td className="row-actions">
          <button type="button" disabled={syncing} onClick={() => (setError(undefined), void actions.syncNow().then(setError))}>
            {syncing ? "Syncing…" : "Sync now"}
          </button>
          <RemoveSource name={source.name} documents={documents} disabled={syncing} onRemove={async (withDocuments) => setError(await actions.remove(withDocuments))} />
        </td>
      )}
    </tr>
  );
}

function RemoveSource({ name, documents, disabled, onRemove }: { name: string; documents: number; disabled: boolean; onRemove: (deleteDocuments: boolean) => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const [withDocuments, setWithDocuments] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="danger-outline" disabled={disabled} onClick={() => (setWithDocuments(false), setAsking(true))}>
        Remove
      </button>
    );
  }
  const confirm = withDocuments ? `Remove ${name} and delete its ${countOf(documents, "document")}` : `Remove ${name}; its ${countOf(documents, "document")} stay`;
  return (
    <div className="confirm remove-source" role="group" aria-label={`Remove ${name}?`}>
      <label className="check">
        <input type="checkbox" checked={withDocuments} onChange={(e) => setWithDocuments(e.target.checked)} />
        Also delete the documents it made
      </label>
      <button
        type="button"
        className="danger"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          void onRemove(withDocuments).finally(() => (setBusy(false), setAsking(false)));
        }}
      >
        {confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </div>
  );
}
