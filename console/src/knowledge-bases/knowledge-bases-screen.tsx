import { useState } from "react";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { useLoad } from "../use-load.ts";
import { CreateKnowledgeBaseForm } from "./create-knowledge-base-form.tsx";
import { EditKnowledgeBaseForm } from "./edit-knowledge-base-form.tsx";
import { offers } from "../api/client.ts";
import { KnowledgeBaseCard } from "./knowledge-base-card.tsx";
import { ImportKnowledgeBaseForm } from "./import-knowledge-base-form.tsx";

export function KnowledgeBasesScreen() {
  const list = useLoad(() => quarry.listKnowledgeBases({}).then((r) => r.knowledgeBases), []);
  const [creating, setCreating] = useState(false);
  const [importing, setImporting] = useState(false);
  const [imported, setImported] = useState<string>();
  const [editing, setEditing] = useState<string>();
  const [error, setError] = useState<string>();

  const remove = async (id: string) => {
    setError(undefined);
    try {
      await quarry.deleteKnowledgeBase({ knowledgeBase: id });
      list.reload();
    } catch (e) {
      setError(describeError(e));
    }
  };

  return (
    <section className="screen">
      <div className="screen-head">
        <h1>Knowledge bases</h1>
        {!creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New knowledge base
          </button>
        )}
        {!importing && (
          <button type="button" onClick={() => (setImporting(true), setImported(undefined))}>
            Import
          </button>
        )}
      </div>
      {importing && (
        <ImportKnowledgeBaseForm
          onCancel={() => setImporting(false)}
          onImported={(summary) => {
            setImporting(false);
            setImported(summary);
            list.reload();
          }}
        />
      )}
      {imported && <p className="muted" role="status">{imported}</p>}
      {creating && (
        <CreateKnowledgeBaseForm
          onCancel={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            list.reload();
          }}
        />
      )}
      <ErrorNote error={list.error ?? error} />
      {list.data?.length === 0 && !creating && <p className="empty">No knowledge bases yet. Create one, then upload documents into it.</p>}
      <div className="cards">
        {list.data?.map((kb) =>
          editing === kb.id ? (
            <EditKnowledgeBaseForm
              key={kb.id}
              kb={kb}
              onCancel={() => setEditing(undefined)}
              onSaved={() => {
                setEditing(undefined);
                list.reload();
              }}
            />
          ) : (
            <KnowledgeBaseCard key={kb.id} kb={kb} onEdit={offers("updateKnowledgeBase") && !kb.correctionsForAssistantId ? () => setEditing(kb.id) : undefined} onDelete={() => remove(kb.id)} />
          ),
        )}
      </div>
    </section>
  );
}
