// Makes a new knowledge base from an archive file (quarry export, or a console export): no parsing,
// and no embedding when it carries the same model's vectors. The file goes in one message, so the
// gateway's upload limit applies; the CLI streams bigger ones (quarry import).
import { useState } from "react";
import { quarry } from "../api/client.ts";
import { useAction } from "../use-action.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { FormActions } from "../components/form-actions.tsx";

export function ImportKnowledgeBaseForm({ onCancel, onImported }: { onCancel: () => void; onImported: (summary: string) => void }) {
  const [file, setFile] = useState<File>();
  const [name, setName] = useState("");
  const action = useAction();
  const submit = () =>
    action.run(async () => {
      if (!file) throw new Error("Choose an archive file first.");
      const res = await quarry.importKnowledgeBase({ options: { name: name.trim() }, archive: new Uint8Array(await file.arrayBuffer()) });
      const assistants = res.assistants.length > 0 ? ` Assistants: ${res.assistants.map((a) => a.name).join(", ")} (${res.corrections} corrections).` : "";
      const notes = res.notes.map((note) => ` Note: ${note}.`).join("");
      onImported(`Imported ${res.knowledgeBase?.name}: ${res.documents} documents, ${res.chunks} chunks${res.reembedded ? ", embedded again (the archive had no vectors)" : ""}.${assistants}${notes}`);
    });
  return (
    <form
      className="panel form-grid"
      aria-label="Import a knowledge base"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label>
        Archive
        <input type="file" accept=".gz,application/gzip" aria-label="Archive file" onChange={(e) => setFile(e.target.files?.[0])} />
      </label>
      <label>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="the archive's name" aria-label="New name" />
      </label>
      <ErrorNote error={action.error} />
      <FormActions label="Import" busyLabel="Importing…" busy={action.busy} disabled={!file} onCancel={onCancel} />
    </form>
  );
}
