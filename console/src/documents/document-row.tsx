import { useEffect, useState } from "react";
import { DocumentStatus, type Document } from "../../../gen/quarry/common/v1/common_pb.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { ProgressBar } from "../components/progress-bar.tsx";
import { formatBytes, formatCount, isSettled, STATUS_LABELS } from "../format.ts";
import { link } from "../router.ts";
import { SourceMark } from "../sources/source-mark.tsx";
import type { Progress } from "./use-ingestion.ts";

/**
 * `onReingest`: absent when the gateway cannot re-ingest; `href`: the document's page, absent when the gateway cannot open one;
 * `sourceName`: the name of the source a synced document came from.
 */
export function DocumentRow({
  doc,
  href,
  live,
  sourceName,
  onEnable,
  onReingest,
  onDelete,
}: {
  doc: Document;
  href?: string;
  live?: Progress;
  sourceName?: string;
  onEnable: (enabled: boolean) => void;
  onReingest?: () => void;
  onDelete: () => void;
}) {
  // The stream is newer than the list until the list is reloaded.
  const status = live?.status ?? doc.status;
  const percent = live?.percent ?? doc.progressPercent;
  const error = live?.error || doc.errorMessage;
  const chunks = status === DocumentStatus.READY ? (live?.chunkCount ?? doc.chunkCount) : doc.chunkCount;
  const failed = status === DocumentStatus.FAILED;
  // The switch moves at once; the list's reload then confirms (or restores) the server's value.
  const [enabled, setEnabled] = useState(doc.enabled);
  useEffect(() => {
    setEnabled(doc.enabled);
  }, [doc.enabled]);
  return (
    <tr data-status={STATUS_LABELS[status]} aria-label={doc.fileName}>
      <td className="file-name">
        {href ? (
          <a href={href} onClick={link(href)} title="Open: its chunks, to search and correct">
            {doc.fileName}
          </a>
        ) : (
          doc.fileName
        )}
        <SourceMark doc={doc} sourceName={sourceName} />
      </td>
      <td className="status-cell" data-label="Status">
        <div className={`status status-${STATUS_LABELS[status]}`}>
          {STATUS_LABELS[status]}
          {status !== DocumentStatus.READY && !failed && ` · ${percent}%`}
        </div>
        {status !== DocumentStatus.READY && <ProgressBar percent={failed ? 100 : percent} failed={failed} label={`${doc.fileName}: ${STATUS_LABELS[status]}`} />}
        {failed && error && <div className="error small">{error}</div>}
      </td>
      <td className="num" data-label="Size">{formatBytes(doc.sizeBytes)}</td>
      <td className="num" data-label="Chunks">{formatCount(chunks)}</td>
      <td data-label="Enabled">
        {/* A failed document has nothing to search: a switch there would claim it is searched. */}
        {failed ? (
          <span className="muted small" data-testid="not-searched">not searched</span>
        ) : (
          <label className="switch" title={enabled ? "Searched" : "Left out of search"}>
            <input type="checkbox" role="switch" checked={enabled} aria-label={`${doc.fileName} enabled`} onChange={(e) => (setEnabled(e.target.checked), onEnable(e.target.checked))} />
            <span />
          </label>
        )}
      </td>
      <td className="row-actions">
        {onReingest && (
          <button
            type="button"
            disabled={!isSettled(status)}
            title={
              failed
                ? "Try the kept original again, with the base's current settings: it fails the same way until its cause is fixed (a parser configured, a model installed)"
                : "Parse, chunk and embed it again from the kept original, with the base's current settings"
            }
            onClick={onReingest}
          >
            {failed ? "Retry" : "Re-ingest"}
          </button>
        )}
        <ConfirmButton label="Delete" confirmLabel="Delete" onConfirm={onDelete} />
      </td>
    </tr>
  );
}
