// One chunk of an opened document: where it sits, what was done to it (edited and its version, added
// by hand, disabled), its text, and the corrections: edit the text, disable or enable it.
import { useState } from "react";
import type { Chunk } from "../../../gen/quarry/common/v1/common_pb.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { Highlight } from "../components/highlight.tsx";
import { useAction } from "../use-action.ts";

export interface ChunkActions {
  /** expectedVersion: the version shown, so an edit made meanwhile elsewhere is not overwritten. */
  edit(chunk: Chunk, text: string): Promise<void>;
  setEnabled(chunk: Chunk, enabled: boolean): Promise<void>;
}

export function ChunkEditor({ chunk, terms, actions }: { chunk: Chunk; terms: string[]; actions: ChunkActions }) {
  const [draft, setDraft] = useState<string>();
  const { busy, error, run, clear } = useAction();
  const pages = chunk.page === 0 ? undefined : chunk.pageEnd > chunk.page ? `pages ${chunk.page}–${chunk.pageEnd}` : `page ${chunk.page}`;
  const label = `chunk ${chunk.index + 1}`;
  return (
    <article className={`card chunk${chunk.disabled ? " chunk-disabled" : ""}`} aria-label={label}>
      <header className="chunk-head">
        <strong>#{chunk.index + 1}</strong>
        <span className="pill">{chunk.tokenCount} tokens</span>
        {pages && <span className="pill">{pages}</span>}
        {chunk.sectionPath.length > 0 && <span className="section-path">{chunk.sectionPath.join(" › ")}</span>}
        {chunk.manual && <span className="pill mark">manual</span>}
        {chunk.edited && <span className="pill mark">edited · v{chunk.version}</span>}
        {chunk.disabled && <span className="pill mark-off">disabled</span>}
      </header>
      {draft === undefined ? (
        <p className="chunk-text">
          <Highlight text={chunk.text} terms={terms} />
        </p>
      ) : (
        <textarea aria-label={`${label} text`} rows={Math.min(16, Math.max(4, draft.split("\n").length + 1))} value={draft} onChange={(e) => setDraft(e.target.value)} />
      )}
      {chunk.edited && chunk.originalText && (
        <details className="original">
          <summary>Text as ingested</summary>
          <p className="chunk-text">{chunk.originalText}</p>
        </details>
      )}
      <ErrorNote error={error} />
      <div className="card-actions">
        {draft === undefined ? (
          <>
            <button type="button" onClick={() => setDraft(chunk.text)}>
              Edit
            </button>
            <button type="button" disabled={busy} onClick={() => run(() => actions.setEnabled(chunk, Boolean(chunk.disabled)))}>
              {chunk.disabled ? "Enable" : "Disable"}
            </button>
          </>
        ) : (
          <>
            <button type="button" className="primary" disabled={busy || !draft.trim()} onClick={() => run(async () => (await actions.edit(chunk, draft), setDraft(undefined)))}>
              {busy ? "Saving…" : "Save"}
            </button>
            <button type="button" disabled={busy} onClick={() => (setDraft(undefined), clear())}>
              Cancel
            </button>
          </>
        )}
      </div>
    </article>
  );
}
