// One port that speaks Connect, gRPC and gRPC-Web. gRPC needs HTTP/2 (cleartext, prior knowledge)
// while browsers and curl speak HTTP/1.1, and Node's cleartext HTTP/2 server cannot take both, so
// each new connection is routed by its first bytes: the HTTP/2 preface goes to the HTTP/2 server,
// anything else to the HTTP/1.1 server. Both share one Connect handler.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { setMaxListeners } from "node:events";
import type { DescFile } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { Code, ConnectError, cors } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "../logger.ts";
import { file_grpc_health_v1_health } from "../../gen/grpc/health/v1/health_pb.ts";
import { file_grpc_reflection_v1_reflection } from "../../gen/grpc/reflection/v1/reflection_pb.ts";
import { HealthRegistry } from "./health.ts";
import { enumValidationInterceptor } from "./enum-validation.ts";
import { rpcEdgeInterceptor } from "./interceptors.ts";
import { tracingServerInterceptor } from "./tracing-interceptors.ts";
import { metricsEndpoint } from "./metrics-endpoint.ts";
import { rpcMetricsInterceptor } from "./metrics-interceptor.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { reflectionRoutes } from "./reflection.ts";
import { reportUndecodableRequestsAsInvalid } from "./undecodable-requests.ts";
import { explainUnsupportedContentTypes } from "./unsupported-content-types.ts";

export type Routes = (router: ConnectRouter) => void;

export interface ServerOptions {
  routes: Routes;
  /** Fully qualified names of the services the routes serve, for health and reflection. */
  serviceNames: string[];
  /** Descriptor files for reflection. */
  files: DescFile[];
  logger: Logger;
  /** Largest request message accepted, bytes. */
  readMaxBytes?: number;
  /** Origins allowed to call from a browser (none by default); ["*"] allows any. */
  corsOrigins?: string[];
  interceptors?: Interceptor[];
  /** More to say when a method refuses a request's Content-Type (HTTP 415): what to use instead. */
  contentTypeHint?: (method: { name: string; parent: { typeName: string } }) => string;
  /** Where each call's code and duration are recorded; without a fallback, GET /metrics exposes them. */
  metrics?: Metrics;
  /** Answers what no route matches (the gateway's console files); plain 404 (or /metrics) without it. */
  fallback?: (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;
}

export interface BuiltServer {
  health: HealthRegistry;
  /** The Node request handler, for tests that want to mount it themselves. */
  handler: (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;
  /** The routes including health and reflection, for in-memory router transports. */
  routes: Routes;
  /** What wraps every call (metrics, error mapping, logging); an in-memory transport must apply them too. Tracing is not among them: it is the transport's. */
  interceptors: Interceptor[];
  /** Aborted when the server starts shutting down: plain-HTTP streams (the fallback's) end with it. */
  shutdownSignal: AbortSignal;
  /** Listens; `interceptors` apply to calls arriving on this listener only (not to in-process transports). */
  listen(port: number, host?: string, options?: ListenOptions): Promise<RunningServer>;
}

export interface ListenOptions {
  interceptors?: Interceptor[];
  /** The bearer token this listener's GET /metrics asks for (QUARRY_INTERNAL_TOKEN); open without it. */
  metricsToken?: string;
}

export interface RunningServer {
  port: number;
  url: string;
  /** Stops accepting connections, lets calls in flight finish (up to graceMs), then closes. */
  close(graceMs?: number): Promise<void>;
}

const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0");

/**
 * Reads a new connection's first bytes until they either are the HTTP/2 preface or can no longer
 * become it, puts them back and says which. The preface may arrive in several TCP segments (a
 * loaded client, a proxy): deciding on the first segment alone sent such an HTTP/2 client to the
 * HTTP/1 parser, which the client saw as "Protocol error".
 */
export function sniffProtocol(socket: net.Socket, decided: (isHttp2: boolean) => void): void {
  let head = Buffer.alloc(0);
  const onReadable = () => {
    for (let chunk: Buffer | null; (chunk = socket.read()) !== null; ) head = Buffer.concat([head, chunk]);
    const seen = Math.min(head.length, HTTP2_PREFACE.length);
    const couldBeHttp2 = head.subarray(0, seen).equals(HTTP2_PREFACE.subarray(0, seen));
    if (head.length === 0 || (couldBeHttp2 && seen < HTTP2_PREFACE.length)) return;
    socket.off("readable", onReadable);
    socket.off("end", onEnd);
    socket.unshift(head);
    decided(couldBeHttp2);
  };
  // Closed before saying enough to tell: nothing to serve.
  const onEnd = () => socket.destroy();
  socket.on("readable", onReadable);
  socket.once("end", onEnd);
}

/**
 * Responses smaller than this go uncompressed even to a client that accepts gzip (Connect's own
 * threshold is 1 KiB). A search's top 10 is a few KiB: zipping it and unzipping it at the client
 * cost more process CPU than sending it (docs/benchmarks/query-threads.md, "Per-request cost").
 * Large answers (listings, exports) are still compressed.
 */
export const COMPRESS_MIN_BYTES = 64 * 1024;

export function buildServer(options: ServerOptions): BuiltServer {
  const health = new HealthRegistry();
  for (const name of options.serviceNames) health.set(name, true);
  const routes: Routes = (router) => {
    options.routes(router);
    health.routes(router);
    reflectionRoutes([...options.files, file_grpc_health_v1_health, file_grpc_reflection_v1_reflection], [...options.serviceNames, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"])(router);
    reportUndecodableRequestsAsInvalid(router);
    explainUnsupportedContentTypes(router, options.contentTypeHint);
  };
  // Tracing is the transport's: a listener's calls continue the caller's traceparent (below), an
  // in-memory transport makes its own one span (transports.ts), so it is not among these.
  const interceptors = [
    ...(options.metrics ? [rpcMetricsInterceptor(options.metrics)] : []),
    rpcEdgeInterceptor(options.logger),
    ...(options.interceptors ?? []),
    enumValidationInterceptor(),
  ];
  // Aborted when the server shuts down: every handler's context.signal follows it, so streams
  // (WatchIngestion, Chat) end with `unavailable` instead of holding the drain open.
  const shutdown = new AbortController();
  // Connect links every call in flight to this signal (one listener each, removed when the call
  // ends), so a busy server has as many listeners as calls: not a leak, and no warning past ten.
  setMaxListeners(0, shutdown.signal);
  const origins = options.corsOrigins ?? [];
  let active = 0;
  const makeHandler = (extra: Interceptor[], metricsToken?: string): BuiltServer["handler"] => {
    const connect = connectNodeAdapter({
      routes,
      readMaxBytes: options.readMaxBytes ?? 64 * 1024 * 1024,
      compressMinBytes: COMPRESS_MIN_BYTES,
      interceptors: [tracingServerInterceptor(), ...interceptors, ...extra],
      shutdownSignal: shutdown.signal,
      fallback: (options.fallback ?? (options.metrics ? metricsEndpoint(options.metrics, metricsToken) : undefined)) as never,
    });
    return (req, res) => {
      active++;
      res.once("close", () => active--);
      // A keep-alive client may still send on a connection it opened before the shutdown; answer
      // what it sends and tell it not to come back on this connection.
      if (shutdown.signal.aborted && req.httpVersionMajor === 1) res.setHeader("Connection", "close");
      const origin = req.headers.origin;
      if (origin && (origins.includes("*") || origins.includes(origin))) {
        res.setHeader("Access-Control-Allow-Origin", origins.includes("*") ? "*" : origin);
        if (!origins.includes("*")) res.setHeader("Vary", "Origin");
        res.setHeader("Access-Control-Expose-Headers", cors.exposedHeaders.join(", "));
        if (req.method === "OPTIONS") {
          res.setHeader("Access-Control-Allow-Methods", cors.allowedMethods.join(", "));
          // The origin is one the operator allowed, so the headers its page asks for are too (the
          // `openai` client in a browser sends its own x-stainless-* headers to the HTTP routes).
          const asked = String(req.headers["access-control-request-headers"] ?? "").split(",").map((h) => h.trim()).filter(Boolean);
          res.setHeader("Access-Control-Allow-Headers", [...new Set([...cors.allowedHeaders, "Authorization", ...asked])].join(", "));
          res.setHeader("Access-Control-Max-Age", "7200");
          res.writeHead(204);
          res.end();
          return;
        }
      }
      connect(req as never, res as never);
    };
  };
  const handlerWithout = makeHandler([]);

  const listen = (port: number, host = "127.0.0.1", listenOptions: ListenOptions = {}) =>
    new Promise<RunningServer>((resolve, reject) => {
      const handler = listenOptions.interceptors?.length || listenOptions.metricsToken ? makeHandler(listenOptions.interceptors ?? [], listenOptions.metricsToken) : handlerWithout;
      const h1 = http.createServer(handler as http.RequestListener);
      // Longer than any client's idle keep-alive, so the server never closes a socket the client is
      // about to reuse (the race shows as ECONNRESET on the client while ingestion keeps us busy).
      h1.keepAliveTimeout = 65_000;
      h1.headersTimeout = 66_000;
      const h2 = http2.createServer({}, handler as never);
      const sessions = new Set<http2.ServerHttp2Session>();
      h2.on("session", (session) => {
        sessions.add(session);
        session.once("close", () => sessions.delete(session));
      });
      const sockets = new Set<net.Socket>();
      const front = net.createServer((socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
        sniffProtocol(socket, (isHttp2) => (isHttp2 ? h2 : h1).emit("connection", socket));
      });
      front.once("error", reject);
      front.listen(port, host, () => {
        const address = front.address() as net.AddressInfo;
        options.logger.info({ port: address.port, host }, "listening");
        resolve({
          port: address.port,
          url: `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`,
          close: async (graceMs = 5_000) => {
            health.shutdown();
            // No new connections; idle keep-alive ones close now, HTTP/2 clients get GOAWAY.
            front.close();
            shutdown.abort(new ConnectError("the server is shutting down", Code.Unavailable));
            h1.closeIdleConnections();
            for (const session of sessions) session.close();
            const deadline = Date.now() + graceMs;
            while (active > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
            for (const socket of sockets) socket.destroy();
          },
        });
      });
    });

  return { health, handler: handlerWithout, routes, interceptors, listen, shutdownSignal: shutdown.signal };
}
