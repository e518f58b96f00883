// How one service reaches another. The choice is configuration: in one process an in-memory router
// transport (no sockets, same semantics), across processes gRPC over HTTP/2.
import { createRouterTransport, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Routes } from "./server.ts";
import { tracingClientInterceptor } from "./tracing-interceptors.ts";

export function inProcessTransport(routes: Routes, interceptors: Interceptor[] = []): Transport {
  return createRouterTransport(routes, { transport: { interceptors: [tracingClientInterceptor()] }, router: { interceptors } });
}

export function grpcTransport(baseUrl: string, interceptors: Interceptor[] = []): Transport {
  return createGrpcTransport({ baseUrl, interceptors: [tracingClientInterceptor(), ...interceptors] });
}
