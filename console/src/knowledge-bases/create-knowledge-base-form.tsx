// Name, description, embedding model (from the catalog; fixed once created) and chunking defaults
// (empty: the chunker's defaults for that model), parents (what an answer reads around a matched
// chunk) and whether whole documents get a vector too.
import { useState } from "react";
import { quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { FormActions } from "../components/form-actions.tsx";
import { useAction } from "../use-action.ts";
import { useEmbeddingModels } from "../model-catalog.ts";
import { DOCUMENT_VECTOR_MODES, PARENT_MODES } from "./chunking-choices.ts";

export function CreateKnowledgeBaseForm({ onCreated, onCancel }: { onCreated: () => void; onCancel: () => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const catalog = useEmbeddingModels();
  // Empty until chosen: the server's default is shown selected and sent as "" (the base takes it).
  const [model, setModel] = useState("");
  const [chunkSize, setChunkSize] = useState("");
  const [chunkOverlap, setChunkOverlap] = useState("");
  const [parent, setParent] = useState(PARENT_MODES[0].value);
  const [documentVector, setDocumentVector] = useState(DOCUMENT_VECTOR_MODES[0].value);
  const { busy, error, run } = useAction();

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const chunking =
        chunkSize || chunkOverlap || parent || documentVector ? { chunkSize: Number(chunkSize || 0), chunkOverlap: Number(chunkOverlap || 0), parent, documentVector } : undefined;
      await quarry.createKnowledgeBase({ name: name.trim(), description, embeddingModel: model, chunking });
      onCreated();
    });
  };

  return (
    <form className="panel form-grid" aria-label="New knowledge base" onSubmit={submit}>
      <label>
        Name
        <input required autoFocus value={name} onChange={(e) => setName(e.target.value)} placeholder="handbook" />
      </label>
      <label>
        Embedding model
        <select value={model || catalog.data?.defaultModel || ""} onChange={(e) => setModel(e.target.value)}>
          {(catalog.data?.models ?? []).map((m) => (
            <option key={m.name} value={m.name}>
              {m.name} — {m.description}, {m.dimension} dims
            </option>
          ))}
        </select>
      </label>
      <label className="wide">
        Description
        <input value={description} onChange={(e) => setDescription(e.target.value)} placeholder="What is in it" />
      </label>
      <label>
        Chunk size (tokens)
        <input type="number" min={1} value={chunkSize} onChange={(e) => setChunkSize(e.target.value)} placeholder="default" />
      </label>
      <label>
        Chunk overlap (tokens)
        <input type="number" min={0} value={chunkOverlap} onChange={(e) => setChunkOverlap(e.target.value)} placeholder="default" />
      </label>
      <label>
        Parents
        <select value={parent} onChange={(e) => setParent(Number(e.target.value))}>
          {PARENT_MODES.map((m) => (
            <option key={m.value} value={m.value}>
              {m.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Document vectors
        <select value={documentVector} onChange={(e) => setDocumentVector(Number(e.target.value))}>
          {DOCUMENT_VECTOR_MODES.map((m) => (
            <option key={m.value} value={m.value}>
              {m.label}
            </option>
          ))}
        </select>
      </label>
      <ErrorNote error={error} />
      <FormActions label="Create" busyLabel="Creating…" busy={busy} disabled={!name.trim()} onCancel={onCancel} />
    </form>
  );
}
