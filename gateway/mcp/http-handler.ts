// MCP's streamable HTTP transport at /mcp, as a route of the gateway's plain-HTTP slot: the slot
// authenticates the caller, and the tools call the public API bound to that caller, so a tool call
// is decided exactly as the same call over Connect would be.
//
// Stateless (no Mcp-Session-Id): every POST gets a server and transport of its own and ends with
// its response. Each request carries its own bearer key, so there is no session a key could be
// bound to (or outlive its revocation in), nothing to keep on one gateway of several, and the
// tools are plain request and response: Quarry never sends the client anything unasked. Replies
// are JSON rather than an SSE stream for the same reason; GET (the server-to-client stream) is 405,
// as the specification allows a server that sends nothing unasked.
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Logger } from "../../lib/logger.ts";
import type { GuardedRoute, HttpFailure, NodeResponse } from "../http/http-route.ts";
import { createQuarryMcpServer } from "./server.ts";
import { QUARRY_VERSION } from "./version.ts";

export const MCP_PATH = "/mcp";

export function mcpRoute(logger: Logger): GuardedRoute {
  return {
    name: "mcp",
    methods: ["POST"],
    path: MCP_PATH,
    role: "reader",
    // Every tool calls the public API as the caller: listings come back filtered, a base out of
    // scope is refused like a missing one.
    scope: { kind: "per-call" },
    body: "raw",
    fail: reply,
    async handle(call) {
      const server = createQuarryMcpServer(call.gateway, QUARRY_VERSION);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      call.res.once("close", () => void server.close().catch((error: unknown) => logger.warn({ err: error }, "closing an MCP server failed")));
      await server.connect(transport);
      // The SDK takes HTTP/1.1 types; its use of them (headers, writeHead, end) is what HTTP/2's compatibility API offers too.
      await transport.handleRequest(call.req as IncomingMessage, call.res as ServerResponse);
    },
  };
}

/** A JSON-RPC error without an id: what MCP clients expect from a request refused before it was read. */
function reply(res: NodeResponse, failure: HttpFailure) {
  res.writeHead(failure.status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: failure.message }, id: null }));
}
