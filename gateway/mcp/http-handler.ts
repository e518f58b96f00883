// MCP's streamable HTTP transport at /mcp, as a plain Node handler the gateway mounts.
//
// Stateless (no Mcp-Session-Id): every POST gets a server and transport of its own and ends with
// its response. Each request carries its own bearer key, so there is no session a key could be
// bound to (or outlive its revocation in), nothing to keep on one gateway of several, and the
// tools are plain request and response: Quarry never sends the client anything unasked. Replies
// are JSON rather than an SSE stream for the same reason; GET (the server-to-client stream) is 405,
// as the specification allows a server that sends nothing unasked.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Logger } from "../../lib/logger.ts";
import { createQuarryMcpServer, type McpQuarryApi } from "./server.ts";

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;
export type NodeHandler = (req: Request, res: Response) => void;

export const MCP_PATH = "/mcp";

/** `apiFor` gives the caller's view of Quarry, or undefined when the request cannot name one (a malformed Host). */
export function mcpHttpHandler(apiFor: (req: Request) => McpQuarryApi | undefined, options: { version: string; logger: Logger }): NodeHandler {
  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.logger.error({ err: error }, "the MCP request failed");
      if (!res.headersSent) reply(res, 500, "the MCP request failed inside Quarry; see the gateway's log");
      else res.end();
    });
  };

  async function handle(req: Request, res: Response) {
    if (req.method !== "POST") {
      res.setHeader("Allow", "POST");
      return reply(res, 405, `${MCP_PATH} takes MCP messages by POST (streamable HTTP, stateless: there is no server-to-client stream to GET)`);
    }
    const api = apiFor(req);
    if (!api) return reply(res, 400, "the request's Host header is not a host name");
    const server = createQuarryMcpServer(api, options.version);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req as IncomingMessage, res as ServerResponse);
  }
}

/** Sends /mcp to the MCP handler and everything else to `otherwise`. */
export function withMcp(mcp: NodeHandler, otherwise: NodeHandler): NodeHandler {
  return (req, res) => ((req.url ?? "").split("?")[0] === MCP_PATH ? mcp(req, res) : otherwise(req, res));
}

/** A JSON-RPC error without an id: what MCP clients expect from a request refused before it was read. */
function reply(res: Response, status: number, message: string) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
