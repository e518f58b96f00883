// The API the /mcp endpoint's tools call: this gateway's own Connect router, in memory, with the
// MCP request's authorization header and host on every call. The router runs the gateway's
// interceptors (access, error mapping, logging), so a tool call is decided exactly as the same
// call over Connect would be, with no socket and no second copy of the access rules.
import type http from "node:http";
import type http2 from "node:http2";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";
import { inProcessTransport } from "../../lib/rpc/transports.ts";
import type { BuiltServer } from "../../lib/rpc/server.ts";
import type { McpQuarryApi } from "./server.ts";

export type GatewayRouter = Pick<BuiltServer, "routes" | "interceptors">;

/** The caller's API, or undefined when the request's Host header is not a host name. */
export function inProcessGatewayClient(gateway: GatewayRouter, req: http.IncomingMessage | http2.Http2ServerRequest): McpQuarryApi | undefined {
  const host = req.headers.host ?? req.headers[":authority"];
  let baseUrl: string;
  try {
    // Without a Host header the call names no loopback host, so a Quarry without keys refuses it.
    baseUrl = new URL(`http://${host ?? "in-memory"}`).origin;
  } catch {
    return undefined;
  }
  const authorization = req.headers.authorization;
  const interceptors: Interceptor[] = authorization
    ? [
        (next) => (request) => {
          request.header.set("authorization", authorization);
          return next(request);
        },
      ]
    : [];
  return createClient(QuarryService, inProcessTransport(gateway.routes, gateway.interceptors, { baseUrl, interceptors }));
}
