// The line that points a person at a trace: its id, and the viewer's page for it when the server has
// QUARRY_TRACE_VIEWER_URL (GetCaller hands it to every key). Asked only when there is a trace, so a
// Quarry without tracing costs the CLI no extra call.
import type { QuarryClient } from "../client/gateway-client.ts";

/** `<label>: <id>` or `<label>: <id> <link>`; "" without a trace id. */
export async function traceLine(client: QuarryClient, label: string, traceId: string): Promise<string> {
  if (!traceId) return "";
  let viewer = "";
  try {
    viewer = (await client.getCaller({})).traceViewerUrl;
  } catch {
    // The link is a courtesy; the id alone still finds the trace.
  }
  return `${label}: ${traceId}${viewer ? ` ${viewer.replaceAll("{trace_id}", traceId)}` : ""}\n`;
}
