// The Sources panel of a knowledge base's page: its sources with their last sync and next run, and
// for an editor Add source, Sync now and Remove (docs/SOURCES.md).
import { useState } from "react";
import type { Document } from "../../../gen/quarry/common/v1/common_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { AddSourceForm } from "./add-source-form.tsx";
import { SourceRow } from "./source-row.tsx";
import type { SourcesState } from "./use-sources.ts";

/** `canEdit`: undefined while the key's role is not known yet (the actions wait for it). */
export function SourcesPanel({ knowledgeBase, state, documents, canEdit, onRemoved }: { knowledgeBase: string; state: SourcesState; documents: Document[]; canEdit: boolean | undefined; onRemoved: () => void }) {
  const [adding, setAdding] = useState(false);
  const { sources } = state;
  const remove = (source: string) => async (deleteDocuments: boolean) => {
    try {
      await quarry.removeSource({ knowledgeBase, source, deleteDocuments });
      state.reload();
      onRemoved();
      return undefined;
    } catch (error) {
      return describeError(error);
    }
  };
  return (
    <section className="source-panel" aria-labelledby="sources-heading">
      <div className="toolbar">
        <h2 id="sources-heading">Sources</h2>
        {canEdit && !adding && (
          <button type="button" onClick={() => setAdding(true)}>
            Add source
          </button>
        )}
      </div>
      {adding && (
        <AddSourceForm
          knowledgeBase={knowledgeBase}
          onAdded={() => {
            setAdding(false);
            state.reload();
          }}
          onCancel={() => setAdding(false)}
        />
      )}
      <ErrorNote error={state.error} />
      {canEdit === false && <p className="muted small">This key is a reader's: it sees the sources and their syncs; an editor adds, syncs and removes them.</p>}
      {sources && sources.length === 0 && !adding && (
        <p className="muted small">No sources: add a folder or a website to keep this base in sync with it.</p>
      )}
      {sources && sources.length > 0 && (
        <div className="table-wrap">
          <table className="sources-table">
            <thead>
              <tr>
                <th>Source</th>
                <th>Where</th>
                <th>Tags</th>
                <th>Schedule</th>
                <th>Last sync</th>
                {canEdit && <th />}
              </tr>
            </thead>
            <tbody>
              {sources.map((s) => (
                <SourceRow
                  key={s.id}
                  source={s}
                  syncing={state.isSyncing(s)}
                  documents={documents.filter((d) => d.metadata.source_id === s.id).length}
                  actions={canEdit ? { syncNow: () => state.syncNow(s), remove: remove(s.id) } : undefined}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
