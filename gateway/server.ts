import { file_quarry_gateway_v1_gateway, QuarryService } from "../gen/quarry/gateway/v1/gateway_pb.ts";
import type { Logger } from "../lib/logger.ts";
import { buildServer } from "../lib/rpc/server.ts";
import type { Interceptor } from "@connectrpc/connect";
import { consoleAssets } from "./console-assets.ts";
import { gatewayRoutes, type GatewayDeps } from "./routes.ts";

export function build(deps: GatewayDeps & { logger: Logger; corsOrigins?: string[]; interceptors?: Interceptor[]; consoleDir?: string }) {
  return buildServer({
    routes: gatewayRoutes(deps),
    serviceNames: [QuarryService.typeName],
    files: [file_quarry_gateway_v1_gateway],
    logger: deps.logger,
    corsOrigins: deps.corsOrigins,
    interceptors: deps.interceptors,
    // The browser console, on the same port (and origin) as the API it calls.
    fallback: consoleAssets(deps.consoleDir),
    // The upload limit is enforced with a clear message in the handler; the transport only needs headroom.
    readMaxBytes: deps.limits.maxUploadBytes + 1024 * 1024,
  });
}
