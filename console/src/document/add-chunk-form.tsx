// A chunk written by hand, added after the document's last chunk (marked manual; a re-ingest keeps it).
import { useState } from "react";
import { ErrorNote } from "../components/error-note.tsx";
import { useAction } from "../use-action.ts";

export function AddChunkForm({ onAdd }: { onAdd: (text: string, sectionPath: string[]) => Promise<void> }) {
  const [text, setText] = useState("");
  const [section, setSection] = useState("");
  const { busy, error, run } = useAction();
  const add = () =>
    run(async () => {
      await onAdd(text, section.split(/[›>]/).map((s) => s.trim()).filter(Boolean));
      setText("");
      setSection("");
    });
  return (
    <form className="card add-chunk" aria-label="Add a chunk" onSubmit={(e) => (e.preventDefault(), void add())}>
      <h2>Add a chunk</h2>
      <label>
        Text
        <textarea rows={4} value={text} onChange={(e) => setText(e.target.value)} placeholder="A passage the file lacks: it is embedded and searchable at once." />
      </label>
      <label>
        <span>
          Section <span className="muted">(optional, e.g. Manual › Safety)</span>
        </span>
        <input value={section} onChange={(e) => setSection(e.target.value)} />
      </label>
      <ErrorNote error={error} />
      <div className="card-actions">
        <button type="submit" className="primary" disabled={busy || !text.trim()}>
          {busy ? "Adding…" : "Add chunk"}
        </button>
      </div>
    </form>
  );
}
