// A trace id shown where it belongs (a document's ingestion, a chat turn, a slow request): a link
// into the trace viewer when the gateway has one configured (QUARRY_TRACE_VIEWER_URL, with
// {trace_id} in it), else the id itself to copy. Nothing when the work was not traced.
import { useEffect, useState } from "react";
import { currentCaller } from "../api/caller.ts";

export function TraceLink({ traceId, viewerUrl, label = "trace" }: { traceId: string; viewerUrl: string; label?: string }) {
  if (!traceId) return null;
  if (!viewerUrl) return <code title="trace id">{traceId}</code>;
  return (
    <a href={viewerUrl.replaceAll("{trace_id}", traceId)} target="_blank" rel="noreferrer" title={`trace ${traceId}`}>
      {label}
    </a>
  );
}

/** The gateway's trace viewer template, "" until known or when there is none (GetCaller). */
export function useTraceViewerUrl(): string {
  const { caller } = currentCaller();
  const [url, setUrl] = useState("");
  useEffect(() => {
    let current = true;
    void caller.then((c) => current && setUrl(c?.traceViewerUrl ?? ""));
    return () => {
      current = false;
    };
  }, [caller]);
  return url;
}
