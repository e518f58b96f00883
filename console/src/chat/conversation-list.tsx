// The conversations held so far, newest first: open one to read and continue it, or delete it.
import type { Conversation } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { ErrorNote } from "../components/error-note.tsx";

export function ConversationList({
  conversations,
  error,
  current,
  describe,
  onOpen,
  onNew,
  onDelete,
}: {
  conversations: Conversation[];
  error?: string;
  current?: string;
  describe: (c: Conversation) => string;
  onOpen: (id: string) => void;
  onNew: () => void;
  onDelete: (id: string) => void;
}) {
  const sorted = [...conversations].sort((a, b) => Number((b.updatedAt?.seconds ?? 0n) - (a.updatedAt?.seconds ?? 0n)));
  return (
    <nav className="conversations" aria-label="Conversations">
      <div className="conversations-head">
        <h2>Conversations</h2>
        <button type="button" onClick={onNew} disabled={!current}>
          New conversation
        </button>
      </div>
      <ErrorNote error={error} />
      {sorted.length === 0 && <p className="muted small">None yet: the first question starts one.</p>}
      <ul>
        {sorted.map((c) => (
          <li key={c.id} className={c.id === current ? "current" : ""} aria-label={c.title}>
            <button type="button" className="conversation-open" aria-current={c.id === current ? "true" : undefined} onClick={() => onOpen(c.id)}>
              <span className="title">{c.title}</span>
              <span className="muted small">
                {describe(c)} · {c.turnCount} {c.turnCount === 1 ? "turn" : "turns"}
              </span>
            </button>
            <ConfirmButton label="Delete" confirmLabel="Delete conversation" onConfirm={() => onDelete(c.id)} />
          </li>
        ))}
      </ul>
    </nav>
  );
}
