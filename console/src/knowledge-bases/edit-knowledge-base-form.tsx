// Rename a knowledge base, edit its description, or change the chunking of future uploads and
// re-ingests (UpdateKnowledgeBase). The documents already ingested keep their chunks until they are
// re-ingested, which the form says, and the model stays (changing it re-embeds: the CLI's job).
import { useState } from "react";
import type { KnowledgeBase } from "../../../gen/quarry/common/v1/common_pb.ts";
import { quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { FormActions } from "../components/form-actions.tsx";
import { useAction } from "../use-action.ts";

export function EditKnowledgeBaseForm({ kb, onSaved, onCancel }: { kb: KnowledgeBase; onSaved: () => void; onCancel: () => void }) {
  const [name, setName] = useState(kb.name);
  const [description, setDescription] = useState(kb.description);
  const [chunkSize, setChunkSize] = useState(kb.chunking?.chunkSize ?? 0);
  const [chunkOverlap, setChunkOverlap] = useState(kb.chunking?.chunkOverlap ?? 0);
  const { busy, error, run } = useAction();
  const chunkingChanged = chunkSize !== kb.chunking?.chunkSize || chunkOverlap !== kb.chunking?.chunkOverlap;

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    void run(async () => {
      await quarry.updateKnowledgeBase({
        knowledgeBase: kb.id,
        name: name.trim() !== kb.name ? name.trim() : undefined,
        description: description !== kb.description ? description : undefined,
        // The whole settings: strategy, separators and parents stay as they were.
        chunking: chunkingChanged && kb.chunking ? { ...kb.chunking, chunkSize, chunkOverlap } : undefined,
      });
      onSaved();
    });
  };

  return (
    <form className="card form-grid" aria-label={`Edit ${kb.name}`} onSubmit={submit}>
      <label className="wide">
        Name
        <input required autoFocus value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label className="wide">
        Description
        <input value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <label>
        Chunk size (tokens)
        <input type="number" min={1} value={chunkSize} onChange={(e) => setChunkSize(Number(e.target.value))} />
      </label>
      <label>
        Chunk overlap (tokens)
        <input type="number" min={0} value={chunkOverlap} onChange={(e) => setChunkOverlap(Number(e.target.value))} />
      </label>
      {chunkingChanged && <p className="muted small wide">New chunking applies to uploads and re-ingests from now on; re-ingest the documents to re-chunk them.</p>}
      <ErrorNote error={error} />
      <FormActions label="Save" busyLabel="Saving…" busy={busy} disabled={!name.trim()} onCancel={onCancel} />
    </form>
  );
}
