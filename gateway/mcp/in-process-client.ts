// The API the /mcp endpoint's tools call: this gateway's own Connect router, in memory, with the
// MCP request's authorization header and host on every call. The router runs the gateway's
// interceptors (access, error mapping, logging), so a tool call is decided exactly as the same
// call over Connect would be, with no socket and no second copy of the access rules.
import type http from "node:http";
import type http2 from "node:http2";
import { createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import type { BuiltServer } from "../../lib/rpc/server.ts";
import type { McpQuarryApi } from "./server.ts";

export type GatewayRouter = Pick<BuiltServer, "routes" | "interceptors">;
type Request = http.IncomingMessage | http2.Http2ServerRequest;

/**
 * The access rules read the host a call names (a Quarry without keys answers only loopback
 * hosts), so each host gets its own transport. Building one registers every route again, which
 * costs more than the call, so the few hosts a gateway is reached by keep theirs.
 */
const KEPT_HOSTS = 16;

/** For a request: the caller's API, or undefined when its Host header is not a host name. */
export function inProcessCallers(gateway: GatewayRouter): (req: Request) => McpQuarryApi | undefined {
  const clients = new Map<string, Client<typeof QuarryService>>();
  const clientFor = (baseUrl: string) => {
    let client = clients.get(baseUrl);
    if (client) return client;
    client = createClient(QuarryService, inProcessTransport(gateway.routes, gateway.interceptors, { baseUrl }));
    clients.set(baseUrl, client);
    if (clients.size > KEPT_HOSTS) clients.delete(clients.keys().next().value!);
    return client;
  };
  return (req) => {
    const host = req.headers.host ?? req.headers[":authority"];
    let baseUrl: string;
    try {
      // Without a Host header the call names no loopback host, so a Quarry without keys refuses it.
      baseUrl = new URL(`http://${host ?? "in-memory"}`).origin;
    } catch {
      return undefined;
    }
    return asCaller(clientFor(baseUrl), req.headers.authorization);
  };
}

/** The calls the tools make, each with the caller's authorization header. */
function asCaller(client: Client<typeof QuarryService>, authorization: string | undefined): McpQuarryApi {
  const as = (options: CallOptions = {}): CallOptions => {
    if (!authorization) return options;
    const headers = new Headers(options.headers);
    headers.set("authorization", authorization);
    return { ...options, headers };
  };
  return {
    listKnowledgeBases: (request, options) => client.listKnowledgeBases(request, as(options)),
    getKnowledgeBase: (request, options) => client.getKnowledgeBase(request, as(options)),
    listDocuments: (request, options) => client.listDocuments(request, as(options)),
    search: (request, options) => client.search(request, as(options)),
    chat: (request, options) => client.chat(request, as(options)),
    getChunkNeighbours: (request, options) => client.getChunkNeighbours(request, as(options)),
  };
}
