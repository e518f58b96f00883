import { ChunkerService, file_quarry_chunker_v1_chunker } from "../../gen/quarry/chunker/v1/chunker_pb.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import { buildServer } from "../../lib/rpc/server.ts";
import { chunkerRoutes, type ChunkerDeps } from "./routes.ts";

export function build(deps: ChunkerDeps & { logger: Logger; metrics?: Metrics }) {
  return buildServer({
    routes: chunkerRoutes(deps),
    serviceNames: [ChunkerService.typeName],
    files: [file_quarry_chunker_v1_chunker],
    logger: deps.logger,
    metrics: deps.metrics,
  });
}
