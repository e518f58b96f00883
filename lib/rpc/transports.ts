// How one service reaches another. The choice is configuration: in one process a direct call of the
// handler through the server's interceptors (in-process-transport.ts: no sockets, no encoding),
// across processes gRPC over HTTP/2. Tracing follows the transport: a gRPC call is a client span
// here and a server span there; an in-memory call is one server span under the caller's
// (lib/rpc/tracing-interceptors.ts).
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { directInProcessTransport } from "./in-process-transport.ts";
import type { Routes } from "./server.ts";
import { tracingClientInterceptor, tracingInProcessInterceptor } from "./tracing-interceptors.ts";

/** `interceptors` wrap each call as a server's would (a BuiltServer's, which hold no tracing). */
export function inProcessTransport(routes: Routes, interceptors: Interceptor[] = []): Transport {
  return directInProcessTransport(routes, [tracingInProcessInterceptor(), ...interceptors]);
}

export function grpcTransport(baseUrl: string, interceptors: Interceptor[] = []): Transport {
  return createGrpcTransport({ baseUrl, interceptors: [tracingClientInterceptor(), ...interceptors] });
}
