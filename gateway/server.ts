import { createClient } from "@connectrpc/connect";
import { file_quarry_gateway_v1_gateway, QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { Logger } from "../lib/logger.ts";
import { enumValidationInterceptor } from "../lib/rpc/enum-validation.ts";
import { rpcEdgeInterceptor } from "../lib/rpc/interceptors.ts";
import { rpcMetricsInterceptor } from "../lib/rpc/metrics-interceptor.ts";
import type { Metrics } from "../lib/metrics/metrics.ts";
import { buildServer } from "../lib/rpc/server.ts";
import { inProcessTransport } from "../lib/rpc/transports.ts";
import { accessInterceptor, scopeCheck, type AccessDeps } from "./access/access-interceptor.ts";
import { callingAs, identifyInProcessCaller } from "./access/in-process-caller.ts";
import { requestLimitsInterceptor } from "./access/request-limits.ts";
import { httpRoutes } from "./http/http-routes.ts";
import { httpSlot } from "./http/http-slot.ts";
import { gatewayRoutes, type GatewayDeps } from "./routes.ts";

/** Largest JSON body a plain-HTTP route reads (a chat's whole conversation fits). */
const MAX_JSON_BYTES = 4 * 1024 * 1024;

export function build(deps: GatewayDeps & { logger: Logger; corsOrigins?: string[]; access: AccessDeps; consoleDir?: string; metrics?: Metrics }) {
  let slot: ReturnType<typeof httpSlot> | undefined;
  const built = buildServer({
    routes: gatewayRoutes(deps),
    serviceNames: [QuarryService.typeName],
    files: [file_quarry_gateway_v1_gateway],
    logger: deps.logger,
    metrics: deps.metrics,
    corsOrigins: deps.corsOrigins,
    // Limits first: the access check looks up each base a request names.
    interceptors: [requestLimitsInterceptor(), accessInterceptor(deps.access)],
    contentTypeHint: (method) =>
      method.parent.typeName === QuarryService.typeName && method.name === "Chat" ? "For answers as server-sent events from a plain JSON body, POST the same JSON to /v1/ask." : "",
    // Plain-HTTP routes (OpenAI-compatible, Dify, REST, the browser console) on the same port.
    fallback: (req, res) => slot!(req, res),
    // The upload limit is enforced with a clear message in the handler; the transport only needs headroom.
    readMaxBytes: deps.limits.maxUploadBytes + 1024 * 1024,
  });
  // The HTTP routes call the public API in process, as the caller their door authenticated.
  const inProcess = inProcessTransport(built.routes, [
    ...(deps.metrics ? [rpcMetricsInterceptor(deps.metrics)] : []),
    rpcEdgeInterceptor(deps.logger),
    requestLimitsInterceptor(),
    accessInterceptor(deps.access, { identify: identifyInProcessCaller }),
    enumValidationInterceptor(),
  ]);
  slot = httpSlot({
    routes: httpRoutes({ consoleDir: deps.consoleDir, limits: deps.limits, blobs: deps.blobs, logger: deps.logger, metrics: deps.metrics }),
    authenticator: deps.access.authenticator,
    checkScope: scopeCheck(deps.access.index),
    callsFor: (who) => ({ gateway: createClient(QuarryService, callingAs(inProcess, who)), embedder: deps.embedder }),
    maxJsonBytes: MAX_JSON_BYTES,
    logger: deps.logger.child({ surface: "http" }),
    shutdown: built.shutdownSignal,
  });
  return built;
}
