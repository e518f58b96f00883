// Assistants: named answer configurations over several knowledge bases. List, create, edit in
// place, delete with confirmation, and start a chat with one.
import { useState } from "react";
import type { Assistant } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { useLoad } from "../use-load.ts";
import { AssistantCard } from "./assistant-card.tsx";
import { AssistantForm } from "./assistant-form.tsx";

export function AssistantsScreen() {
  const list = useLoad(() => quarry.listAssistants({}).then((r) => r.assistants), []);
  // Corrections bases are mounted by Quarry beside the assistant's own, never by hand.
  const bases = useLoad(() => quarry.listKnowledgeBases({}).then((r) => r.knowledgeBases.filter((kb) => !kb.correctionsForAssistantId)), []);
  // "new", an assistant's id, or nothing.
  const [editing, setEditing] = useState<string>();
  const [error, setError] = useState<string>();

  const remove = async (a: Assistant) => {
    setError(undefined);
    try {
      await quarry.deleteAssistant({ assistant: a.id });
      list.reload();
    } catch (e) {
      setError(describeError(e));
    }
  };
  const done = () => {
    setEditing(undefined);
    list.reload();
  };

  return (
    <section className="screen">
      <div className="screen-head">
        <h1>Assistants</h1>
        {editing === undefined && (
          <button type="button" className="primary" onClick={() => setEditing("new")}>
            New assistant
          </button>
        )}
      </div>
      {editing === "new" && bases.data && <AssistantForm bases={bases.data} onSaved={done} onCancel={() => setEditing(undefined)} />}
      <ErrorNote error={list.error ?? bases.error ?? error} />
      {list.data?.length === 0 && editing !== "new" && <p className="empty">No assistants yet. An assistant answers from the knowledge bases it mounts, with its own prompt and retrieval defaults.</p>}
      <div className="cards">
        {list.data?.map((a) =>
          editing === a.id && bases.data ? (
            <div key={a.id} className="cards-wide">
              <AssistantForm assistant={a} bases={bases.data} onSaved={done} onCancel={() => setEditing(undefined)} />
            </div>
          ) : (
            <AssistantCard key={a.id} assistant={a} bases={bases.data ?? []} onEdit={() => setEditing(a.id)} onDelete={() => remove(a)} />
          ),
        )}
      </div>
    </section>
  );
}
