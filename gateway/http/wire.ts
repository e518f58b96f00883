// Writing JSON bodies and server-sent events on a Node response, for every plain-HTTP surface.
import type { ServerResponse } from "node:http";
import type { FailureWriter, NodeResponse } from "./http-route.ts";

export function sendJson(res: NodeResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Starts an event stream: no buffering by proxies, no caching. */
export function openEventStream(res: NodeResponse): void {
  res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", "X-Accel-Buffering": "no" });
  // HTTP/1.1 responses are flushed as they are written; headers go out now so the client sees the stream start.
  (res as { flushHeaders?: () => void }).flushHeaders?.();
}

/** Writes a piece of a streamed body (HTTP/1.1's and HTTP/2's responses write alike, but their types differ). */
export function writeText(res: NodeResponse, text: string): void {
  // A client that went away mid-stream has nobody left to read the rest (its abort ends the stream too).
  if (res.writableEnded || (res as ServerResponse).destroyed) return;
  (res as ServerResponse).write(text);
}

/** One event: `data: <json>` (and `event: <name>` when named). */
export function sendEvent(res: NodeResponse, data: unknown, event?: string): void {
  writeText(res, `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}

/** Connect's JSON error shape ({code, message}), for the REST routes: the same a Connect client reads. */
export const connectJsonFailure: FailureWriter = (res, failure) => sendJson(res, failure.status, { code: failure.code, message: failure.message });
