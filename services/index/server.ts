import { file_quarry_index_v1_index, IndexService } from "../../gen/quarry/index/v1/index_pb.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics/metrics.ts";
import { buildServer } from "../../lib/rpc/server.ts";
import { indexRoutes, type IndexDeps } from "./routes.ts";

export function build(deps: IndexDeps & { logger: Logger; metrics?: Metrics }) {
  return buildServer({
    routes: indexRoutes(deps),
    serviceNames: [IndexService.typeName],
    files: [file_quarry_index_v1_index],
    logger: deps.logger,
    metrics: deps.metrics,
  });
}
