// GET /metrics on an internal service's port (the gateway serves its own through its HTTP slot,
// with its access rules). Behind QUARRY_INTERNAL_TOKEN when one is set, as the service's RPCs are.
import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import type http2 from "node:http2";
import type { Metrics } from "../metrics/metrics.ts";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Answers GET /metrics (and 404 for anything else a service's Connect router did not take). */
export function metricsEndpoint(metrics: Metrics, token: string | undefined): (req: Request, res: Response) => void {
  const expected = token === undefined ? undefined : digest(token);
  return (req, res) => {
    const path = new URL(req.url ?? "/", "http://service").pathname;
    if (path !== "/metrics") return plain(res, 404, `nothing is served at ${path}\n`);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      return plain(res, 405, "/metrics answers GET\n");
    }
    if (expected) {
      const presented = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ""))?.[1];
      // Compared as digests: constant time, whatever the lengths.
      if (!presented || !timingSafeEqual(digest(presented), expected)) return plain(res, 401, "this is an internal Quarry service: /metrics needs QUARRY_INTERNAL_TOKEN as a bearer token\n");
    }
    metrics.exposition().then(
      (exposition) => {
        if (!exposition) return plain(res, 404, "this process records no metrics\n");
        res.writeHead(200, { "Content-Type": exposition.contentType });
        res.end(req.method === "HEAD" ? "" : exposition.text);
      },
      (error: unknown) => plain(res, 500, `the metrics could not be collected: ${(error as Error).message}\n`),
    );
  };
}

function plain(res: Response, status: number, text: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(text);
}
