// System (admins): each service's health, each ingestion stage's last hour and backlog, the slowest
// requests (linked to their trace when a trace viewer is configured), and the dead letters with
// their reasons and a re-drive. Refreshed every few seconds while open.
import { useEffect, useState } from "react";
import type { DeadLetter, GetSystemStatusResponse } from "../../../gen/quarry/gateway/v1/system_status_pb.ts";
import { quarry } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { ErrorNote } from "../components/error-note.tsx";
import { TraceLink } from "../components/trace-link.tsx";
import { useLoad } from "../use-load.ts";

const REFRESH_MS = 5_000;

export function SystemScreen() {
  const status = useLoad(() => quarry.getSystemStatus({}), []);
  const [error, setError] = useState<string>();
  const [redriven, setRedriven] = useState<string>();
  const { reload } = status;
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);

  const redrive = async (request: { ids: string[]; all: boolean }) => {
    setError(undefined);
    try {
      const res = await quarry.redriveDeadLetters(request);
      setRedriven(`Re-driven: ${res.redriven.map((d) => d.fileName || d.documentId).join(", ") || "nothing"}.`);
      reload();
    } catch (e) {
      setError(describeError(e));
    }
  };

  const s = status.data;
  return (
    <section className="screen">
      <div className="screen-head">
        <h1>System</h1>
        <p className="muted">
          {s ? `Quarry (${s.mode}). Counts cover the last ${Math.round(s.windowSeconds / 60)} minutes; ` : ""}refreshed every {REFRESH_MS / 1000} s.
        </p>
      </div>
      <ErrorNote error={status.error ?? error} />
      {s && (
        <>
          <h2>Services</h2>
          <div className="table-wrap">
            <table aria-label="Services">
              <thead>
                <tr>
                  <th>Service</th>
                  <th>Health</th>
                  <th>Address</th>
                  <th>Error</th>
                </tr>
              </thead>
              <tbody>
                {s.services.map((x) => (
                  <tr key={x.name} aria-label={x.name}>
                    <td>{x.name}</td>
                    <td>{x.serving ? "serving" : "down"}</td>
                    <td>{x.address}</td>
                    <td>{x.error}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2>Ingestion stages</h2>
          <div className="table-wrap">
            <table aria-label="Stages">
              <thead>
                <tr>
                  <th>Stage</th>
                  <th>Handled</th>
                  <th>Failed</th>
                  <th>Retrying</th>
                  <th>Rejected</th>
                  <th>Dead-lettered</th>
                  <th>In flight</th>
                  <th>Backlog</th>
                  <th>Failures by reason</th>
                </tr>
              </thead>
              <tbody>
                {s.stages.map((x) => (
                  <tr key={x.stage} aria-label={x.stage}>
                    <td>{x.stage}</td>
                    {(x.counted ? [x.handled, x.failed, x.retrying, x.rejected, x.deadLettered, x.inFlight].map(String) : ["–", "–", "–", "–", "–", "–"]).map((v, i) => (
                      <td key={i}>{v}</td>
                    ))}
                    <td>{String(x.pending)}</td>
                    <td>{x.failures.map((f) => `${f.reason} ${f.count}`).join(", ")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {s.reportingProcesses.length > 0 && (
            <p className="muted small">
              Counted over {s.reportingProcesses.length} stage process{s.reportingProcesses.length === 1 ? "" : "es"}: {s.reportingProcesses.join(", ")}
            </p>
          )}
          {s.stages.some((x) => !x.counted) && <p className="muted small">Stage counts could not be read (see the notes); each service's /metrics still has them.</p>}
          <h2>Slowest requests</h2>
          {s.slowestRequests.length === 0 ? (
            <p className="empty">No requests in this window.</p>
          ) : (
            <div className="table-wrap">
              <table aria-label="Slowest requests">
                <thead>
                  <tr>
                    <th>Method</th>
                    <th>Duration</th>
                    <th>Code</th>
                    <th>Trace</th>
                  </tr>
                </thead>
                <tbody>
                  {s.slowestRequests.map((r, i) => (
                    <tr key={i}>
                      <td>{r.method}</td>
                      <td>{r.durationMs.toFixed(0)} ms</td>
                      <td>{r.code}</td>
                      <td>{traceLink(s, r.traceId)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <h2>Dead letters</h2>
          {redriven && (
            <p className="muted" role="status">
              {redriven}
            </p>
          )}
          {s.deadLetters.length === 0 ? (
            <p className="empty">No dead letters.</p>
          ) : (
            <>
              <ConfirmButton label="Re-drive all" confirmLabel={`Re-drive all ${s.deadLetters.length}`} onConfirm={() => redrive({ ids: [], all: true })} />
              <div className="table-wrap">
                <table aria-label="Dead letters">
                  <thead>
                    <tr>
                      <th>Document</th>
                      <th>Stage</th>
                      <th>Reason</th>
                      <th>Died</th>
                      <th />
                    </tr>
                  </thead>
                  <tbody>
                    {s.deadLetters.map((d) => (
                      <tr key={d.id} aria-label={d.fileName || d.documentId}>
                        <td>{d.fileName || d.documentId}</td>
                        <td>{d.stage}</td>
                        <td>{reasonOf(d)}</td>
                        <td>{d.deadAt ? new Date(Number(d.deadAt.seconds) * 1000).toLocaleString() : ""}</td>
                        <td>
                          <ConfirmButton label="Re-drive" confirmLabel={`Re-drive ${d.fileName || d.documentId}`} onConfirm={() => redrive({ ids: [d.id], all: false })} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )}
          {s.notes.map((note) => (
            <p key={note} className="muted small">
              {note}
            </p>
          ))}
        </>
      )}
    </section>
  );
}

function traceLink(s: GetSystemStatusResponse, traceId: string) {
  return traceId ? <TraceLink traceId={traceId} viewerUrl={s.traceViewerUrl} /> : "–";
}

function reasonOf(d: DeadLetter): string {
  const notes = [d.rejected ? "rejected" : "", d.redrives > 0 ? `${d.redrives} re-drives` : ""].filter(Boolean);
  return notes.length ? `${d.reason} (${notes.join(", ")})` : d.reason;
}
