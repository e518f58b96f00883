// A pass-through HTTP proxy in front of a search engine server that counts and times every request
// by kind (method, the catalog's index or a chunk index, the API, the refresh asked for), so a bench
// can say what each document cost the engine whatever code sent the requests.
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RequestKind {
  count: number;
  /** Summed request time, ms (requests overlap, so this exceeds wall time). */
  ms: number;
}

export interface EngineRequestCounter {
  url: string;
  /** Counts since the last reset, by kind ("PUT catalog _doc refresh=true"). */
  counts(): Map<string, RequestKind>;
  reset(): void;
  close(): Promise<void>;
}

/** The kind of a request: its method, which index (catalog, chunks, other) and API, and its refresh. */
export function requestKind(method: string, url: string): string {
  const { pathname, searchParams } = new URL(url, "http://engine");
  const parts = pathname.split("/").filter(Boolean);
  const target = parts[0]?.startsWith("_") ? "" : parts[0]?.includes("-catalog") ? "catalog" : parts[0]?.includes("-chunks-") ? "chunks" : "other";
  // API names start with one underscore (record ids such as __document__:… do not).
  const api = parts.filter((p) => /^_[a-z]/.test(p)).join("/") || "(index)";
  const refresh = searchParams.get("refresh");
  return [method, target, api, refresh === null ? "" : `refresh=${refresh}`].filter(Boolean).join(" ");
}

export async function startEngineRequestCounter(engineUrl: string): Promise<EngineRequestCounter> {
  const target = new URL(engineUrl);
  let kinds = new Map<string, RequestKind>();
  const server: Server = createServer((req, res) => {
    const started = performance.now();
    const kind = requestKind(req.method ?? "GET", req.url ?? "/");
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on("end", () => {
        const entry = kinds.get(kind) ?? { count: 0, ms: 0 };
        entry.count++;
        entry.ms += performance.now() - started;
        kinds.set(kind, entry);
      });
    });
    upstream.on("error", (error) => {
      res.writeHead(502);
      res.end(String(error));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => new Map(kinds),
    reset: () => {
      kinds = new Map();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
