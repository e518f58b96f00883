// An assistant's published corrections, newest first: the question each answers, the corrected
// answer, its ingestion status and who published it; deleting one stops answers using it.
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { ErrorNote } from "../components/error-note.tsx";
import { STATUS_LABELS } from "../format.ts";
import { useLoad } from "../use-load.ts";
import { useState } from "react";

export function CorrectionsList({ assistant }: { assistant: string }) {
  const list = useLoad(() => quarry.listCorrections({ assistant }).then((r) => r.corrections), [assistant]);
  const [error, setError] = useState<string>();
  const remove = async (id: string) => {
    setError(undefined);
    try {
      await quarry.deleteCorrection({ correctionId: id });
      list.reload();
    } catch (e) {
      setError(describeError(e));
    }
  };
  return (
    <section className="corrections" aria-label={`corrections of ${assistant}`}>
      <ErrorNote error={list.error ?? error} />
      {list.data?.length === 0 && <p className="muted small">No corrections yet. Correct an answer from the chat.</p>}
      <ul>
        {list.data?.map((c) => (
          <li key={c.id} aria-label={c.question}>
            <p className="small">
              <strong>{c.question}</strong>
              {c.originalQuestion && c.originalQuestion !== c.question && <span className="muted"> (asked as “{c.originalQuestion}”)</span>}
            </p>
            <p className="small">{c.correctedAnswer}</p>
            <p className="muted small">
              {c.document ? STATUS_LABELS[c.document.status] : "unknown"}
              {c.author && ` · by ${c.author}`}
              {c.createdAt && ` · ${new Date(Number(c.createdAt.seconds) * 1000).toLocaleString("en-GB")}`}
            </p>
            <ConfirmButton label="Delete" confirmLabel="Delete correction" onConfirm={() => remove(c.id)} />
          </li>
        ))}
      </ul>
    </section>
  );
}
