// A real HTTP server speaking the two rerank APIs Quarry calls, for tests: TEI's `POST /rerank`
// ({query, texts} → [{index, score}], sorted by score) and the Jina/Cohere-style `POST /v1/rerank`
// ({model, query, documents, top_n} → {id, results: [{index, relevance_score}], meta}). Scores are
// scripted by the test; failures (an HTTP status, or a delay past the client's timeout) too.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type RerankStubProtocol = "tei" | "cohere";

export interface RerankStubOptions {
  protocol: RerankStubProtocol;
  /** Each text's relevance to the query; the stub sorts and cuts like the real servers. */
  score: (query: string, text: string) => number;
  /** Answer with this status and an error body instead. */
  failWith?: () => number | undefined;
  /** Wait this long before answering (to outlast a client timeout). */
  delayMs?: () => number;
}

export interface RerankStub {
  /** The server's base URL (no path). */
  url: string;
  requests: { path: string; headers: IncomingMessage["headers"]; body: any }[];
  close(): Promise<void>;
}

export async function startRerankStub(options: RerankStubOptions): Promise<RerankStub> {
  const requests: RerankStub["requests"] = [];
  const server = createServer((req, res) => {
    handle(req, res, options, requests).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, options: RerankStubOptions, requests: RerankStub["requests"]): Promise<void> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const path = new URL(req.url ?? "/", "http://stub").pathname;
  const body = JSON.parse(Buffer.concat(parts).toString("utf8") || "null");
  requests.push({ path, headers: req.headers, body });
  const delay = options.delayMs?.() ?? 0;
  if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  const status = options.failWith?.();
  if (status) return send(res, status, options.protocol === "tei" ? { error: "model overloaded", error_type: "overloaded" } : { message: "internal server error" });

  if (options.protocol === "tei") {
    if (req.method !== "POST" || path !== "/rerank") return send(res, 404, { error: "Not Found", error_type: "not_found" });
    if (typeof body?.query !== "string" || !Array.isArray(body?.texts) || body.texts.length === 0) {
      return send(res, 422, { error: "`texts` cannot be empty", error_type: "validation" });
    }
    const ranked = (body.texts as string[]).map((text, index) => ({ index, score: options.score(body.query, text) })).sort((a, b) => b.score - a.score);
    return send(res, 200, ranked);
  }
  if (req.method !== "POST" || path !== "/v1/rerank") return send(res, 404, { detail: "Not Found" });
  if (typeof body?.query !== "string" || !Array.isArray(body?.documents)) return send(res, 400, { message: "query and documents are required" });
  const ranked = (body.documents as string[])
    .map((text, index) => ({ index, relevance_score: options.score(body.query, text) }))
    .sort((a, b) => b.relevance_score - a.relevance_score)
    .slice(0, body.top_n ?? body.documents.length);
  send(res, 200, { id: "rerank-stub", results: ranked, meta: { billed_units: { search_units: 1 } } });
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(payload));
}
