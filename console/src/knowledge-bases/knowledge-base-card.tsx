import type { KnowledgeBase } from "../../../gen/quarry/common/v1/common_pb.ts";
import { link } from "../router.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { formatCount } from "../format.ts";
import { levelsSummary } from "./chunking-choices.ts";
import { ExportButton } from "./export-button.tsx";

export function KnowledgeBaseCard({ kb, onEdit, onDelete }: { kb: KnowledgeBase; onEdit?: () => void; onDelete: () => void }) {
  const path = `/kb/${encodeURIComponent(kb.name)}`;
  return (
    <article className="card kb-card" aria-label={kb.name}>
      <h2>
        <a href={path} onClick={link(path)}>
          {kb.name}
        </a>
      </h2>
      {kb.description && <p className="description">{kb.description}</p>}
      {kb.correctionsForAssistantId && <p className="pill corrections-pill">an assistant's managed corrections</p>}
      <dl className="counts">
        <div>
          <dt>documents</dt>
          <dd data-count="documents">{formatCount(kb.documentCount)}</dd>
        </div>
        <div>
          <dt>chunks</dt>
          <dd data-count="chunks">{formatCount(kb.chunkCount)}</dd>
        </div>
        <div>
          <dt>tokens</dt>
          <dd data-count="tokens">{formatCount(kb.tokenCount)}</dd>
        </div>
      </dl>
      <p className="muted small">
        {kb.embeddingModel} · {kb.embeddingDimension} dims · chunks of {kb.chunking?.chunkSize} tokens, {kb.chunking?.chunkOverlap} overlap
        <br />
        <span data-testid="levels">{levelsSummary(kb.chunking?.parent, kb.chunking?.documentVector)}</span>
      </p>
      <div className="card-actions">
        <a className="button" href={path} onClick={link(path)}>
          Documents
        </a>
        {onEdit && (
          <button type="button" onClick={onEdit}>
            Edit
          </button>
        )}
        <ExportButton name={kb.name} />
        <ConfirmButton label="Delete" confirmLabel={`Delete ${kb.name} and its documents`} onConfirm={onDelete} />
      </div>
    </article>
  );
}
