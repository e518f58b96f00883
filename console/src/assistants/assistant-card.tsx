import type { Assistant } from "../../../gen/quarry/common/v1/assistant_pb.ts";
import { FusionMethod, type KnowledgeBase } from "../../../gen/quarry/common/v1/common_pb.ts";
import { useState } from "react";
import { offers } from "../api/client.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { CorrectionsList } from "../corrections/corrections-list.tsx";
import { modeLabel, REWRITE_MODES } from "../retrieval-modes.ts";
import { link } from "../router.ts";

export function AssistantCard({ assistant: a, bases, onEdit, onDelete }: { assistant: Assistant; bases: KnowledgeBase[]; onEdit: () => void; onDelete: () => void }) {
  const nameOf = (id: string) => bases.find((b) => b.id === id)?.name ?? id;
  const r = a.retrieval;
  const chat = `/chat?assistant=${encodeURIComponent(a.name)}`;
  const [corrections, setCorrections] = useState(false);
  return (
    <article className="card kb-card" aria-label={a.name}>
      <h2>{a.name}</h2>
      {a.description && <p className="description">{a.description}</p>}
      {a.systemPrompt && <p className="prompt small">{a.systemPrompt}</p>}
      <ul className="mount-list" aria-label="mounted knowledge bases">
        {[...a.knowledgeBases]
          .sort((x, y) => y.priority - x.priority)
          .map((m) => (
            <li key={m.knowledgeBase}>
              <strong>{nameOf(m.knowledgeBase)}</strong>
              <span className="pill">top {m.topK || "k"}</span>
              <span className="pill">priority {m.priority}</span>
            </li>
          ))}
      </ul>
      <p className="muted small" data-testid="retrieval-defaults">
        {modeLabel(r?.mode ?? 0)} · {r?.topK || 8} chunks · threshold {(r?.minScore ?? 0).toFixed(2)}
        {r?.rerank && " · rerank"}
        {r?.rewrite ? ` · ${REWRITE_MODES.find((m) => m.value === r.rewrite)?.label}` : ""}
        {r?.fusion === FusionMethod.CONVEX && ` · convex fusion α ${r.convexAlpha ?? 0.8}`}
        {a.hideFileNames && " · file names hidden"}
      </p>
      <div className="card-actions">
        <a className="button" href={chat} onClick={link(chat)}>
          Chat
        </a>
        <button type="button" onClick={onEdit}>
          Edit
        </button>
        {offers("listCorrections") && (
          <button type="button" aria-expanded={corrections} onClick={() => setCorrections((c) => !c)}>
            Corrections
          </button>
        )}
        {/* Its corrections base is its own and goes with it (DeleteAssistant): the confirmation says so. */}
        <ConfirmButton label="Delete" confirmLabel={`Delete ${a.name} and its corrections`} onConfirm={onDelete} />
      </div>
      {corrections && <CorrectionsList assistant={a.id} />}
    </article>
  );
}
