// "Correct this answer": the answer the assistant should have given, published as a document of
// its corrections knowledge base (CorrectAnswer) and followed until it is ingested, after which a
// question that matches it is answered from it first.
import { useState } from "react";
import { DocumentStatus } from "../../../gen/quarry/common/v1/common_pb.ts";
import type { Correction } from "../../../gen/quarry/gateway/v1/corrections_pb.ts";
import { quarry } from "../api/client.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { FormActions } from "../components/form-actions.tsx";
import { useAction } from "../use-action.ts";
import { STATUS_LABELS } from "../format.ts";

export function CorrectionForm({ turnId, question, answer, onClose }: { turnId: string; question: string; answer: string; onClose: () => void }) {
  const [wording, setWording] = useState(question);
  const [corrected, setCorrected] = useState(answer.replace(/\s*\[\d+\]/g, ""));
  const [published, setPublished] = useState<Correction>();
  const [status, setStatus] = useState<{ status: DocumentStatus; error: string }>();
  const { busy, error, run } = useAction();

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const { correction } = await quarry.correctAnswer({ turnId, correctedAnswer: corrected.trim(), question: wording.trim() === question ? "" : wording.trim() });
      setPublished(correction);
      const id = correction!.document?.id || correction!.id;
      setStatus({ status: correction!.document?.status ?? DocumentStatus.PENDING, error: "" });
      for await (const u of quarry.watchIngestion({ documentIds: [id] })) setStatus({ status: u.status, error: u.error });
    });
  };

  if (published) {
    const ready = status?.status === DocumentStatus.READY;
    return (
      <div className="panel correction-done" role="status" aria-label="correction" data-status={status ? STATUS_LABELS[status.status] : "queued"}>
        <p>
          <strong>Correction published</strong> for “{published.question}”.{" "}
          {ready ? "It is ingested: the next matching question is answered from it." : status?.error ? <span className="error">{status.error}</span> : `Ingesting: ${status ? STATUS_LABELS[status.status] : "queued"}…`}
        </p>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    );
  }
  return (
    <form className="panel form-grid correction-form" aria-label="Correct this answer" onSubmit={submit}>
      <label className="wide">
        The question it answers
        <input value={wording} onChange={(e) => setWording(e.target.value)} />
      </label>
      <label className="wide">
        Corrected answer
        <textarea rows={4} required autoFocus value={corrected} onChange={(e) => setCorrected(e.target.value)} />
      </label>
      <ErrorNote error={error} />
      <FormActions label="Publish correction" busyLabel="Publishing…" busy={busy} disabled={!corrected.trim()} onCancel={onClose} />
    </form>
  );
}
